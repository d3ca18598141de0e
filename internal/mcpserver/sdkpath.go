package mcpserver

import (
	"bytes"
	"io"
	"net/http"

	"github.com/agentd/agentd/internal/telemetry"
)

// serveSDK hands a POST whose body was read to one of e's SDK handlers
// (with the request's principal bound: e.bound): pathStateless and
// pathInitialize, and pathSession once its bookkeeping is done.
func serveSDK(w http.ResponseWriter, r *http.Request, e *endpoint, h http.Handler, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	// The SDK runs a session's handlers on the session's context,
	// not the request's; the headers are what it hands them
	// (req.Extra.Header), so the request's span goes there.
	telemetry.Inject(r.Context(), r.Header)
	e.bound[h].ServeHTTP(w, r)
}
