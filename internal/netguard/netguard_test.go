package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLookup resolves names from a table, so tests never touch real DNS.
func fakeLookup(table map[string][]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		ss, ok := table[host]
		if !ok {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		out := make([]netip.Addr, len(ss))
		for i, s := range ss {
			out[i] = netip.MustParseAddr(s)
		}
		return out, nil
	}
}

var names = map[string][]string{
	"public.test":      {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
	"private.test":     {"10.1.2.3"},
	"loopback.test":    {"127.0.0.1"},
	"mixed.test":       {"93.184.216.34", "127.0.0.1"},
	"meta.test":        {"169.254.169.254"},
	"v6private.test":   {"fd00::1"},
	"mapped.test":      {"::ffff:192.168.0.1"},
	"nat64.test":       {"64:ff9b::a9fe:a9fe"},
	"localhost":        {"127.0.0.1"},
	"app.localhost":    {"127.0.0.1"},
	"xn--bcher-kva.de": {"93.184.216.34"},
}

func TestCheckIP(t *testing.T) {
	strict := &Policy{}
	private := &Policy{AllowPrivate: true}
	meta := &Policy{AllowMetadata: true}
	tests := []struct {
		ip                 string
		strict, priv, meta bool // allowed under each policy
	}{
		{"8.8.8.8", true, true, true},
		{"127.0.0.1", false, true, false},
		{"::1", false, true, false},
		{"10.0.0.1", false, true, false},
		{"fd00::1", false, true, false},
		{"169.254.1.1", false, true, false},
		{"fe80::1%lo", false, true, false},
		{"100.64.0.1", false, true, false},
		{"169.254.169.254", false, false, true},
		{"fd00:ec2::254", false, false, true},
		{"100.100.100.200", false, false, true},
		{"::ffff:169.254.169.254", false, false, true},
		{"0.0.0.0", false, false, false},
		{"::", false, false, false},
		{"224.0.0.1", false, false, false},
		{"255.255.255.255", false, false, false},
		{"192.0.2.1", false, false, false},
		{"::ffff:127.0.0.1", false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			ip := netip.MustParseAddr(tt.ip)
			for _, c := range []struct {
				name string
				p    *Policy
				want bool
			}{{"strict", strict, tt.strict}, {"private", private, tt.priv}, {"metadata", meta, tt.meta}} {
				err := c.p.CheckIP(ip)
				if (err == nil) != c.want {
					t.Errorf("%s: CheckIP(%s) = %v, want allowed=%v", c.name, tt.ip, err, c.want)
				}
				if err != nil && !errors.Is(err, ErrBlocked) {
					t.Errorf("%s: error %v does not wrap ErrBlocked", c.name, err)
				}
			}
		})
	}
	t.Run("nil policy is strict", func(t *testing.T) {
		var p *Policy
		if err := p.CheckIP(netip.MustParseAddr("127.0.0.1")); !errors.Is(err, ErrBlocked) {
			t.Errorf("nil policy allowed loopback: %v", err)
		}
		if err := p.CheckIP(netip.MustParseAddr("1.1.1.1")); err != nil {
			t.Errorf("nil policy refused public: %v", err)
		}
	})
}

func TestCheckURL(t *testing.T) {
	ctx := t.Context()
	strict := &Policy{LookupIP: fakeLookup(names)}
	private := &Policy{AllowPrivate: true, LookupIP: fakeLookup(names)}
	tests := []struct {
		url          string
		strict, priv bool
	}{
		{"https://public.test/path?q=1", true, true},
		{"http://93.184.216.34/", true, true},
		{"http://[2606:4700:4700::1111]:8080/", true, true},
		{"http://user:pw@public.test/", true, true},
		{"http://PUBLIC.TEST./", true, true},
		{"http://bücher.de/", true, true},
		// Loopback in every spelling.
		{"http://127.0.0.1/", false, true},
		{"http://127.0.0.1:8080/admin", false, true},
		{"http://[::1]/", false, true},
		{"http://[::ffff:127.0.0.1]/", false, true},
		{"http://[::ffff:7f00:1]/", false, true},
		{"http://[64:ff9b::7f00:1]/", false, true},
		{"http://[2002:7f00:1::1]/", false, true},
		{"http://2130706433/", false, false},
		{"http://0x7f000001/", false, false},
		{"http://0177.0.0.1/", false, false},
		{"http://0x7f.1/", false, false},
		{"http://127.1/", false, false},
		{"http://127.0.1/", false, false},
		{"http://017700000001/", false, false},
		{"http://0x7F.0.0.1/", false, false},
		{"http://127.0.0.1./", false, false},
		{"http://%31%32%37.0.0.1/", false, false},
		{"http://１２７.０.０.１/", false, false},
		{"http://0/", false, false},
		{"http://1.2.3.4.5/", false, false},
		{"http://foo.123/", false, false},
		{"http://localhost/", false, true},
		{"http://LOCALHOST:3000/", false, true},
		{"http://app.localhost/", false, true},
		{"http://loopback.test/", false, true},
		// Private and link-local.
		{"http://10.0.0.1/", false, true},
		{"http://192.168.1.1/", false, true},
		{"http://172.16.5.4/", false, true},
		{"http://[fd00::1]/", false, true},
		{"http://[fe80::1%25eth0]/", false, true},
		{"http://169.254.1.1/", false, true},
		{"http://100.64.0.1/", false, true},
		{"http://private.test/", false, true},
		{"http://v6private.test/", false, true},
		{"http://mapped.test/", false, true},
		{"http://mixed.test/", false, true},
		// Metadata: refused even with AllowPrivate.
		{"http://169.254.169.254/latest/meta-data/", false, false},
		{"http://[fd00:ec2::254]/", false, false},
		{"http://100.100.100.200/", false, false},
		{"http://169.254.170.2/v2/credentials", false, false},
		{"http://[::ffff:169.254.169.254]/", false, false},
		{"http://[::ffff:a9fe:a9fe]/", false, false},
		{"http://2852039166/", false, false},
		{"http://0xa9.0xfe.0xa9.0xfe/", false, false},
		{"http://metadata.google.internal/computeMetadata/v1/", false, false},
		{"http://METADATA.GOOGLE.INTERNAL./", false, false},
		{"http://metadata.goog/", false, false},
		{"http://metadata/", false, false},
		{"http://meta.test/", false, false},
		{"http://nat64.test/", false, false},
		// Never allowed.
		{"http://0.0.0.0/", false, false},
		{"http://[::]/", false, false},
		{"http://224.0.0.1/", false, false},
		{"http://255.255.255.255/", false, false},
		// Not http.
		{"ftp://public.test/", false, false},
		{"file:///etc/passwd", false, false},
		{"gopher://public.test/", false, false},
		{"javascript:alert(1)", false, false},
		{"http:public.test", false, false},
		{"//public.test/", false, false},
		{"http:///path", false, false},
		{"http://public.test:0/", false, false},
		{"http://public.test:99999/", false, false},
		{"http://bad_host!.test/", false, false},
		{"http://nxdomain.test/", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			for _, c := range []struct {
				name string
				p    *Policy
				want bool
			}{{"strict", strict, tt.strict}, {"private", private, tt.priv}} {
				u, err := c.p.CheckURL(ctx, tt.url)
				if (err == nil) != c.want {
					t.Errorf("%s: CheckURL(%q) = %v, want allowed=%v", c.name, tt.url, err, c.want)
				}
				if err == nil && u == nil {
					t.Errorf("%s: nil URL without error", c.name)
				}
				if err != nil && strings.Contains(err.Error(), "pw") {
					t.Errorf("%s: error leaks credentials: %v", c.name, err)
				}
			}
		})
	}
}

func TestCheckURLErrors(t *testing.T) {
	p := &Policy{LookupIP: fakeLookup(names)}
	tests := []struct {
		url       string
		blocked   bool
		wantClass Class
		wantText  string
	}{
		{"http://2130706433/", true, Loopback, "non-canonical"},
		{"http://169.254.169.254/", true, Metadata, "metadata"},
		{"http://mixed.test/", true, Loopback, "resolves to a loopback"},
		{"http://nxdomain.test/", false, Invalid, "resolve"},
		{"http://user:secret@[::1/", false, Invalid, "parse url"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			_, err := p.CheckURL(t.Context(), tt.url)
			if err == nil {
				t.Fatal("accepted")
			}
			if errors.Is(err, ErrBlocked) != tt.blocked {
				t.Errorf("errors.Is(ErrBlocked) = %v, want %v (%v)", !tt.blocked, tt.blocked, err)
			}
			var be *BlockedError
			if tt.blocked && (!errors.As(err, &be) || be.Class != tt.wantClass) {
				t.Errorf("class: got %+v, want %v", be, tt.wantClass)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q lacks %q", err, tt.wantText)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error leaks credentials: %v", err)
			}
		})
	}
}

// TestHint: a refusal of a private destination names the caller's own
// setting, and no setting at all when the caller has none.
func TestHint(t *testing.T) {
	const hint = "set push_allow_private = true in [a2a]"
	for _, tt := range []struct {
		name, url string
		hint      string
		want      string
	}{
		{"loopback ip", "http://127.0.0.1:8080/hook", hint, "loopback address (" + hint + ")"},
		{"private ip", "http://10.1.2.3/", hint, "private address (" + hint + ")"},
		{"localhost name", "http://localhost:9/", hint, "localhost name (" + hint + ")"},
		{"resolves to loopback", "http://mixed.test/", hint, "resolves to a loopback address (" + hint + ")"},
		{"no hint", "http://127.0.0.1/", "", "loopback address"},
		{"metadata is not relaxed by it", "http://169.254.169.254/", hint, "cloud metadata address"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := (&Policy{Hint: tt.hint, LookupIP: fakeLookup(names)}).CheckURL(t.Context(), tt.url)
			if !errors.Is(err, ErrBlocked) || !strings.HasSuffix(err.Error(), tt.want) {
				t.Fatalf("error %v, want one ending %q", err, tt.want)
			}
			if tt.hint == "" && strings.Contains(err.Error(), "allow_private") {
				t.Errorf("error %q names a setting the caller did not give", err)
			}
		})
	}
}

func TestAllowHosts(t *testing.T) {
	p := &Policy{
		AllowHosts: []string{"Internal.Corp", "10.9.8.7", "[fd00::5]"},
		LookupIP:   fakeLookup(map[string][]string{"internal.corp": {"10.0.0.2"}, "other.corp": {"10.0.0.3"}}),
	}
	tests := []struct {
		url  string
		want bool
	}{
		{"http://internal.corp/", true},
		{"http://INTERNAL.CORP./", true},
		{"http://10.9.8.7:81/", true},
		{"http://[fd00::5]/", true},
		{"http://other.corp/", false},
		{"http://10.9.8.6/", false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			_, err := p.CheckURL(t.Context(), tt.url)
			if (err == nil) != tt.want {
				t.Errorf("CheckURL(%q) = %v, want allowed=%v", tt.url, err, tt.want)
			}
		})
	}
}

// fakeDNS is a tiny DNS server on loopback UDP that answers A and AAAA
// queries from a table; anything else is NXDOMAIN.
type fakeDNS struct {
	conn    net.PacketConn
	records map[string][]netip.Addr
	queries atomic.Int64
	wg      sync.WaitGroup
}

func startFakeDNS(t *testing.T, records map[string][]string) *fakeDNS {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &fakeDNS{conn: conn, records: map[string][]netip.Addr{}}
	for name, ss := range records {
		for _, s := range ss {
			d.records[name] = append(d.records[name], netip.MustParseAddr(s))
		}
	}
	d.wg.Add(1)
	go d.serve()
	t.Cleanup(func() {
		conn.Close()
		d.wg.Wait()
	})
	return d
}

func (d *fakeDNS) serve() {
	defer d.wg.Done()
	buf := make([]byte, 1500)
	for {
		n, from, err := d.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := d.answer(buf[:n]); resp != nil {
			d.queries.Add(1)
			d.conn.WriteTo(resp, from)
		}
	}
}

func (d *fakeDNS) answer(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	// Read the question name.
	i := 12
	var labels []string
	for {
		if i >= len(q) {
			return nil
		}
		l := int(q[i])
		i++
		if l == 0 {
			break
		}
		if l > 63 || i+l > len(q) {
			return nil
		}
		labels = append(labels, strings.ToLower(string(q[i:i+l])))
		i += l
	}
	if i+4 > len(q) {
		return nil
	}
	qtype := int(q[i])<<8 | int(q[i+1])
	question := q[12 : i+4]
	name := strings.Join(labels, ".")
	addrs, ok := d.records[name]
	var answers [][]byte
	for _, a := range addrs {
		if (qtype == 1 && a.Is4()) || (qtype == 28 && a.Is6()) {
			answers = append(answers, a.AsSlice())
		}
	}
	flags := []byte{0x81, 0x80}
	if !ok {
		flags[1] = 0x83 // NXDOMAIN
	}
	resp := append([]byte{q[0], q[1]}, flags...)
	resp = append(resp, 0, 1, 0, byte(len(answers)), 0, 0, 0, 0)
	resp = append(resp, question...)
	for _, rdata := range answers {
		resp = append(resp, 0xc0, 12, byte(qtype>>8), byte(qtype), 0, 1, 0, 0, 0, 60, 0, byte(len(rdata)))
		resp = append(resp, rdata...)
	}
	return resp
}

func (d *fakeDNS) resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dl net.Dialer
			return dl.DialContext(ctx, "udp", d.conn.LocalAddr().String())
		},
	}
}

func TestResolverFakeDNS(t *testing.T) {
	dns := startFakeDNS(t, map[string][]string{
		"intranet.agentd-test.example": {"10.20.30.40"},
		"v6.agentd-test.example":       {"fd00::7"},
		"cloud.agentd-test.example":    {"169.254.169.254"},
		"ok.agentd-test.example":       {"93.184.216.34", "2606:2800:220:1::1"},
		"split.agentd-test.example":    {"93.184.216.34", "fd00::1"},
	})
	strict := &Policy{Resolver: dns.resolver()}
	private := &Policy{AllowPrivate: true, Resolver: dns.resolver()}
	tests := []struct {
		host         string
		strict, priv bool
	}{
		{"intranet.agentd-test.example", false, true},
		{"v6.agentd-test.example", false, true},
		{"cloud.agentd-test.example", false, false},
		{"ok.agentd-test.example", true, true},
		{"split.agentd-test.example", false, true},
		{"missing.agentd-test.example", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			for _, c := range []struct {
				name string
				p    *Policy
				want bool
			}{{"strict", strict, tt.strict}, {"private", private, tt.priv}} {
				_, err := c.p.CheckURL(t.Context(), "http://"+tt.host+"/")
				if (err == nil) != c.want {
					t.Errorf("%s: CheckURL = %v, want allowed=%v", c.name, err, c.want)
				}
			}
		})
	}
	if dns.queries.Load() == 0 {
		t.Fatal("the fake DNS server was never asked: the Resolver field is ignored")
	}
}

// serverAddr returns the httptest server's port.
func serverPort(t *testing.T, s *httptest.Server) string {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func TestDialContext(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	port := serverPort(t, srv)

	t.Run("private refused", func(t *testing.T) {
		p := &Policy{}
		_, err := p.DialContext(t.Context(), "tcp", "127.0.0.1:"+port)
		if !errors.Is(err, ErrBlocked) {
			t.Fatalf("dial loopback: %v", err)
		}
	})
	t.Run("private allowed", func(t *testing.T) {
		p := &Policy{AllowPrivate: true}
		c, err := p.DialContext(t.Context(), "tcp", "127.0.0.1:"+port)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	})
	t.Run("udp refused", func(t *testing.T) {
		p := &Policy{AllowPrivate: true}
		if _, err := p.DialContext(t.Context(), "udp", "127.0.0.1:53"); !errors.Is(err, ErrBlocked) {
			t.Fatalf("dial udp: %v", err)
		}
	})
	t.Run("legacy spelling refused even with AllowPrivate", func(t *testing.T) {
		p := &Policy{AllowPrivate: true, LookupIP: func(context.Context, string) ([]netip.Addr, error) {
			t.Error("legacy spelling was looked up")
			return nil, errors.New("no")
		}}
		if _, err := p.DialContext(t.Context(), "tcp", "2130706433:"+port); !errors.Is(err, ErrBlocked) {
			t.Fatalf("dial decimal: %v", err)
		}
	})
	t.Run("one lookup, checked address dialled", func(t *testing.T) {
		var lookups atomic.Int64
		p := &Policy{AllowPrivate: true, LookupIP: func(_ context.Context, host string) ([]netip.Addr, error) {
			lookups.Add(1)
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}}
		c, err := p.DialContext(t.Context(), "tcp", "svc.test:"+port)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if got := c.RemoteAddr().String(); got != "127.0.0.1:"+port {
			t.Errorf("connected to %s", got)
		}
		if lookups.Load() != 1 {
			t.Errorf("%d lookups, want 1", lookups.Load())
		}
	})
	if hits.Load() != 0 {
		t.Errorf("server got %d requests from bare dials", hits.Load())
	}
}

// TestDNSRebinding: the name is public when CheckURL looks, loopback when
// the transport dials. The dial must re-check and refuse.
func TestDNSRebinding(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	var calls atomic.Int64
	p := &Policy{LookupIP: func(context.Context, string) ([]netip.Addr, error) {
		if calls.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}}
	target := "http://rebind.test:" + serverPort(t, srv) + "/"
	if _, err := p.CheckURL(t.Context(), target); err != nil {
		t.Fatalf("first look should pass: %v", err)
	}
	resp, err := p.Client(5 * time.Second).Get(target)
	if err == nil {
		resp.Body.Close()
		t.Fatal("request after rebinding succeeded")
	}
	if !errors.Is(err, ErrBlocked) {
		t.Errorf("error does not wrap ErrBlocked: %v", err)
	}
	if hits.Load() != 0 {
		t.Errorf("server was reached %d times", hits.Load())
	}
}

func TestClientRedirects(t *testing.T) {
	var targetHits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		targetHits.Add(1)
		fmt.Fprint(w, "secret internal data")
	}))
	defer target.Close()
	tport := serverPort(t, target)

	var firstHits atomic.Int64
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		firstHits.Add(1)
		switch r.URL.Path {
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-localhost":
			http.Redirect(w, r, "http://localhost:"+tport+"/", http.StatusFound)
		case "/to-decimal":
			http.Redirect(w, r, "http://2130706433:"+tport+"/", http.StatusMovedPermanently)
		case "/to-ipv6-loopback":
			http.Redirect(w, r, "http://[::1]:"+tport+"/", http.StatusTemporaryRedirect)
		case "/to-target":
			http.Redirect(w, r, "http://127.0.0.1:"+tport+"/", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			fmt.Fprint(w, "first")
		}
	}))
	defer first.Close()

	// onlyFirst lets the first server through by name (and nothing else
	// on loopback); allowPrivate lets every loopback hop through.
	onlyFirst := &Policy{AllowHosts: []string{"first.test"}, LookupIP: fakeLookup(map[string][]string{"first.test": {"127.0.0.1"}})}
	allowPrivate := &Policy{AllowPrivate: true}
	strict := &Policy{}
	firstByName := "http://first.test:" + serverPort(t, first)

	tests := []struct {
		name      string
		p         *Policy
		url       string
		wantOK    bool
		wantFirst int64 // hits on the first server
		wantBody  string
	}{
		{"strict refuses first hop", strict, first.URL + "/to-target", false, 0, ""},
		{"redirect to metadata refused", allowPrivate, first.URL + "/to-metadata", false, 1, ""},
		{"redirect to file refused", allowPrivate, first.URL + "/to-file", false, 1, ""},
		{"redirect to localhost refused", onlyFirst, firstByName + "/to-localhost", false, 1, ""},
		{"redirect to decimal loopback refused", onlyFirst, firstByName + "/to-decimal", false, 1, ""},
		{"redirect to decimal refused with AllowPrivate", allowPrivate, first.URL + "/to-decimal", false, 1, ""},
		{"redirect to ipv6 loopback refused", onlyFirst, firstByName + "/to-ipv6-loopback", false, 1, ""},
		{"redirect to loopback refused", onlyFirst, firstByName + "/to-target", false, 1, ""},
		{"redirect loop stops", allowPrivate, first.URL + "/loop", false, 10, ""},
		{"allow private follows redirect", allowPrivate, first.URL + "/to-target", true, 1, "secret internal data"},
		{"allowed host direct", onlyFirst, firstByName + "/", true, 1, "first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			firstHits.Store(0)
			targetHits.Store(0)
			resp, err := tt.p.Client(5 * time.Second).Get(tt.url)
			if !tt.wantOK {
				if err == nil {
					resp.Body.Close()
					t.Fatal("request succeeded")
				}
				if targetHits.Load() != 0 {
					t.Errorf("target reached %d times", targetHits.Load())
				}
				if tt.name != "redirect loop stops" && !errors.Is(err, ErrBlocked) {
					t.Errorf("error does not wrap ErrBlocked: %v", err)
				}
				// CheckRedirect must refuse before the dial guard has to.
				if strings.HasPrefix(tt.name, "redirect to") && !strings.Contains(err.Error(), "redirect: ") {
					t.Errorf("redirect not refused by CheckRedirect: %v", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				buf := new(strings.Builder)
				_, _ = fmt.Fprint(buf, readAll(t, resp))
				if buf.String() != tt.wantBody {
					t.Errorf("body %q, want %q", buf, tt.wantBody)
				}
			}
			if got := firstHits.Load(); got != tt.wantFirst {
				t.Errorf("first server hit %d times, want %d", got, tt.wantFirst)
			}
		})
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

func TestTransport(t *testing.T) {
	p := &Policy{}
	tr := p.Transport()
	if tr.Proxy != nil {
		t.Error("transport uses a proxy")
	}
	if tr.DialContext == nil || tr.DialTLSContext != nil {
		t.Error("transport dial is not guarded")
	}
	if tr.MaxIdleConnsPerHost != 64 {
		t.Errorf("MaxIdleConnsPerHost = %d", tr.MaxIdleConnsPerHost)
	}
	if tr == http.DefaultTransport {
		t.Error("transport is the shared default")
	}
	c := p.Client(3 * time.Second)
	if c.Timeout != 3*time.Second || c.CheckRedirect == nil {
		t.Errorf("client not configured: %+v", c)
	}
}

func TestParseLegacyIPv4(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" = not an address
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"10.0x10.1", "10.16.0.1"},
		{"0x", "0.0.0.0"},
		{"0", "0.0.0.0"},
		{"00000000000000000000000000000177.0.0.1", "127.0.0.1"},
		{"4294967295", "255.255.255.255"},
		{"4294967296", ""},
		{"256.0.0.1", ""},
		{"1.2.3.4.5", ""},
		{"1..2", ""},
		{"08.0.0.1", ""},
		{"0xg.1", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			ip, ok := parseLegacyIPv4(tt.in)
			got := ""
			if ok {
				got = ip.String()
			}
			if got != tt.want {
				t.Errorf("parseLegacyIPv4(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
