//go:build linux

package reliability

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// connProxy is a loopback TCP proxy in front of a fake server whose
// connections a test must be able to close: the daemon's providers keep
// idle connections in transports of their own, which only the server end
// can close (as an idle timeout would). Closing them is not hiding a
// leak: a run still holding its response body is not waiting on the
// connection and stays visible.
type connProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

// proxyURL starts a proxy to the host of rawURL and returns rawURL with
// the proxy's address, and the proxy. It is closed when the test ends.
func proxyURL(t testing.TB, rawURL string) (string, *connProxy) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &connProxy{ln: ln, target: u.Host, conns: map[net.Conn]bool{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.Close)
	u.Host = ln.Addr().String()
	return u.String(), p
}

func (p *connProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(up, c) })
		p.wg.Go(func() { p.pipe(c, up) })
	}
}

// pipe copies src to dst, then closes both.
func (p *connProxy) pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// DropConns closes every connection through the proxy.
func (p *connProxy) DropConns() {
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
}

// Close stops the proxy and waits for its goroutines.
func (p *connProxy) Close() {
	p.ln.Close()
	p.DropConns()
	p.wg.Wait()
}
