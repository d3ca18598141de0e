package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
)

// The paging convention of every list route under /api (docs/api.md):
//
//	GET /api/audit?limit=100&offset=200
//	{"records": [...], "total": 10000, "limit": 100, "offset": 200}
//
// limit and offset, not a cursor: the dashboard jumps to a page ("records
// 201–300 of 10,000") and every list is ordered by the store or in
// memory, where an offset is exact and cheap at these sizes. total is the
// number of items the filters match, whatever the page, so a client
// knows where it is and when to stop (offset+len(items) >= total).

const (
	// MaxLimit is the largest page: a bigger limit is a 400, not quietly
	// cut, so a client never mistakes a short page for the end.
	MaxLimit = 1000
	// DefaultLimit is the page without a limit. It is the largest one: a
	// default smaller than the maximum would protect nothing (anyone may
	// ask for the maximum) and would cut the short lists (agents, tools)
	// that clients read whole.
	DefaultLimit = MaxLimit
)

// Page is a list request's window.
type Page struct {
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

// ParsePage reads limit (1..MaxLimit, default DefaultLimit) and offset
// (0 or more, default 0) from r's query. A bad value is a 400 naming the
// parameter and its bounds.
func ParsePage(r *http.Request) (Page, error) {
	p := Page{Limit: DefaultLimit}
	q := r.URL.Query()
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return Page{}, &Error{Status: http.StatusBadRequest, Code: "invalid", Field: "limit",
				Message: fmt.Sprintf("limit: %q is not a whole number from 1 to %d", s, MaxLimit)}
		}
		p.Limit = n
	}
	if s := q.Get("offset"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return Page{}, &Error{Status: http.StatusBadRequest, Code: "invalid", Field: "offset",
				Message: fmt.Sprintf("offset: %q is not a whole number of 0 or more", s)}
		}
		p.Offset = n
	}
	return p, nil
}

// Window returns the page's part of items, a list held in memory.
func Window[T any](items []T, p Page) []T {
	if p.Offset >= len(items) {
		return []T{} // [] in JSON, never null
	}
	return items[p.Offset:min(p.Offset+p.Limit, len(items))]
}

// PageBody is a list route's answer: the page's items under key, the
// total the filters match and the window that was applied.
func PageBody(key string, items any, total int, p Page) map[string]any {
	return map[string]any{key: items, "total": total, "limit": p.Limit, "offset": p.Offset}
}
