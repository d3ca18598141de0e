package mcpserver

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A sealed session id carries what any replica needs to serve a session
// another replica initialized, so that no replica keeps state the others
// need: the client's initialize parameters and who opened the session.
// It is authenticated encryption (AES-256-GCM) under a key every replica
// shares: a client can neither read nor forge one, and an id sealed for
// one endpoint does not open on another.
//
// Form: "v1." + base64url(nonce || ciphertext of sessionClaims).

// sealPrefix starts every sealed id, naming its format.
const sealPrefix = "v1."

// sessionClaims is what a sealed session id holds.
type sessionClaims struct {
	// ID is random: two sessions opened with the same parameters get
	// different ids.
	ID string `json:"id"`
	// IssuedAt is when the session was initialized (Unix seconds); the
	// id is refused once MaxAge has passed.
	IssuedAt int64 `json:"iat"`
	// User is the principal that opened the session ("" for a local
	// client); only that principal may use it.
	User string                `json:"u,omitempty"`
	Init *mcp.InitializeParams `json:"init"`
}

// sealer seals and opens session ids with one or more keys: the first
// seals, every one opens, so keys rotate without breaking live sessions.
type sealer struct {
	aeads  []cipher.AEAD
	maxAge time.Duration
}

// sessionKeyInfo separates the keys derived for session ids from any
// other use of the same secret.
const sessionKeyInfo = "agentd mcp session ids v1"

// newSealer derives an AES-256-GCM key from each secret (HKDF-SHA256).
func newSealer(secrets [][]byte, maxAge time.Duration) (*sealer, error) {
	if len(secrets) == 0 {
		return nil, errors.New("sealing session ids needs at least one key")
	}
	s := &sealer{maxAge: maxAge}
	for i, secret := range secrets {
		if len(secret) < 32 {
			return nil, fmt.Errorf("session key %d is %d bytes; at least 32 are needed", i+1, len(secret))
		}
		key, err := hkdf.Key(sha256.New, secret, nil, sessionKeyInfo, 32)
		if err != nil {
			return nil, fmt.Errorf("derive session key %d: %w", i+1, err)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		s.aeads = append(s.aeads, aead)
	}
	return s, nil
}

// aad binds an id to the endpoint ("" for the main one, else a gateway's
// server) it was sealed for.
func aad(endpoint string) []byte { return []byte("agentd-mcp-session\x00" + endpoint) }

// seal returns the session id carrying c, for endpoint.
func (s *sealer) seal(endpoint string, c sessionClaims) (string, error) {
	plain, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encode session: %w", err)
	}
	aead := s.aeads[0]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := aead.Seal(nonce, nonce, plain, aad(endpoint))
	return sealPrefix + base64.RawURLEncoding.EncodeToString(out), nil
}

// errBadSession is every reason a session id does not open, alike: the
// client learns only that the session is unknown.
var errBadSession = errors.New("session not found")

// open returns the claims of id, sealed for endpoint and still valid.
func (s *sealer) open(endpoint, id string, now time.Time) (sessionClaims, error) {
	rest, ok := strings.CutPrefix(id, sealPrefix)
	if !ok {
		return sessionClaims{}, errBadSession
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return sessionClaims{}, errBadSession
	}
	for _, aead := range s.aeads {
		if len(raw) < aead.NonceSize()+aead.Overhead() {
			return sessionClaims{}, errBadSession
		}
		plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], aad(endpoint))
		if err != nil {
			continue
		}
		var c sessionClaims
		if err := json.Unmarshal(plain, &c); err != nil || c.Init == nil {
			return sessionClaims{}, errBadSession
		}
		if age := now.Sub(time.Unix(c.IssuedAt, 0)); age > s.maxAge || age < -time.Hour {
			return sessionClaims{}, errBadSession
		}
		return c, nil
	}
	return sessionClaims{}, errBadSession
}

// idHash names a session id in the shared record of ended sessions and
// in notifications, without revealing the id.
func idHash(id string) []byte {
	sum := sha256.Sum256([]byte(id))
	return sum[:]
}
