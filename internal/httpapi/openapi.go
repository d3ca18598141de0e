package httpapi

import (
	_ "embed"
	"encoding/json"
	"net/http"
)

// OpenAPIPath is where the API's OpenAPI 3.1 description is served.
const OpenAPIPath = "/api/openapi.json"

// openAPIDoc is the OpenAPI 3.1 description of every route under /api,
// written by hand: the handlers answer maps and SDK types, so there is no
// route metadata a generator could read that would be truer than the
// document itself. TestOpenAPI in internal/daemon keeps it true: its
// paths and methods against the route table, both ways, and its schemas
// against a running daemon's answers.
//
//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the document with info.version set to version.
func OpenAPI(version string) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		return nil, err
	}
	if info, ok := doc["info"].(map[string]any); ok && version != "" {
		info["version"] = version
	}
	return json.MarshalIndent(doc, "", "  ")
}

// openAPI serves the document. It is public (publicRoutes in
// internal/daemon says why) and the same for every request, so it is
// built once.
func (a *API) openAPI(w http.ResponseWriter, r *http.Request) error {
	a.openAPIOnce.Do(func() { a.openAPIBody, a.openAPIErr = OpenAPI(a.opts.Version) })
	if a.openAPIErr != nil {
		return a.openAPIErr
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(a.openAPIBody)
	return nil
}
