package main

import (
	"fmt"
	"html"
	"strings"
)

// Colours say whose bar it is: agentd (blue, lighter for a second agentd
// path in the same panel), the peer agentd is compared with (orange), or
// a reference that is not a competitor (grey: direct stdio, the floor
// relay, the minimal server, the model alone, the store backends and
// telemetry variants).
const (
	colorAgentd  = "#2563eb"
	colorAgentd2 = "#93c5fd"
	colorPeer    = "#f59e0b"
	colorRef     = "#94a3b8"
)

// pathColor picks a path's colour; agentdSeen counts agentd paths of the
// panel so far.
func pathColor(path string, agentdSeen int) string {
	switch {
	case strings.HasPrefix(path, "agentd") || strings.HasPrefix(path, "turn:"):
		if agentdSeen > 0 {
			return colorAgentd2
		}
		return colorAgentd
	case strings.Contains(path, "supergateway") || strings.Contains(path, "mcp-proxy") || strings.Contains(path, "@a2a-js"):
		return colorPeer
	default:
		return colorRef
	}
}

// chartSVG draws one panel per scenario that measured throughput: a
// horizontal bar per path and concurrency, grouped by concurrency, each
// panel scaled to its own largest value. No dependencies: plain SVG text.
func chartSVG(r *Report) string {
	const (
		barMaxW  = 460
		barH     = 16
		gap      = 4
		groupGap = 10
		titleH   = 34
		panelGap = 18
	)
	type bar struct {
		label string
		value float64
		color string
	}
	type group struct{ bars []bar }
	type panel struct {
		title  string
		groups []group
		max    float64
	}
	var panels []panel
	for _, s := range r.Scenarios {
		var p panel
		p.title = fmt.Sprintf("%s. %s: calls per second (longer is better)", s.ID, s.Title)
		colors := map[string]string{}
		agentdSeen := 0
		byConc := map[int]*group{}
		var order []int
		for _, row := range s.Rows {
			// A stream's rate is not a throughput: it is read to its
			// end one at a time to time its first event.
			if row.Rate <= 0 || row.NA != "" || strings.Contains(row.Path, "first event") {
				continue
			}
			c, ok := colors[row.Path]
			if !ok {
				c = pathColor(row.Path, agentdSeen)
				if c == colorAgentd || c == colorAgentd2 {
					agentdSeen++
				}
				colors[row.Path] = c
			}
			g, ok := byConc[row.Concurrency]
			if !ok {
				g = &group{}
				byConc[row.Concurrency] = g
				order = append(order, row.Concurrency)
			}
			label := row.Path
			if row.Concurrency > 0 {
				label += fmt.Sprintf(", c=%d", row.Concurrency)
			}
			g.bars = append(g.bars, bar{label, row.Rate, c})
			p.max = max(p.max, row.Rate)
		}
		if len(order) == 0 {
			continue
		}
		for _, c := range order {
			p.groups = append(p.groups, *byConc[c])
		}
		panels = append(panels, p)
	}

	// The label column fits the longest label (about 6.6 px per
	// character at 12 px sans-serif).
	longest := 0
	for _, p := range panels {
		for _, g := range p.groups {
			for _, br := range g.bars {
				longest = max(longest, len([]rune(br.label)))
			}
		}
	}
	labelW := max(220, int(float64(longest)*6.6)+20)
	width := max(900, labelW+barMaxW+110)
	height := 62
	for _, p := range panels {
		height += titleH + panelGap
		for _, g := range p.groups {
			height += len(g.bars)*(barH+gap) + groupGap
		}
	}
	if len(panels) == 0 {
		height = 100
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="10" y="22" font-size="15" font-weight="bold">agentd benchmarks — %s, %d cores, %s</text>`+"\n",
		html.EscapeString(r.Machine.CPU), r.Machine.Cores, html.EscapeString(r.Machine.Date))
	legend := []struct{ color, text string }{{colorAgentd, "agentd"}, {colorPeer, "the peer compared with"}, {colorRef, "reference (direct, minimal server, model alone)"}}
	x := 10
	for _, l := range legend {
		fmt.Fprintf(&b, `<rect x="%d" y="34" width="12" height="12" fill="%s"/><text x="%d" y="45">%s</text>`+"\n", x, l.color, x+17, html.EscapeString(l.text))
		x += 17 + 7*len(l.text) + 24
	}
	if len(panels) == 0 {
		b.WriteString(`<text x="10" y="75">No throughput was measured in this run.</text>` + "\n")
	}
	y := 62
	for _, p := range panels {
		y += titleH
		fmt.Fprintf(&b, `<text x="10" y="%d" font-size="13" font-weight="bold">%s</text>`+"\n", y-10, html.EscapeString(p.title))
		for _, g := range p.groups {
			for _, br := range g.bars {
				w := 1.0
				if p.max > 0 {
					w = max(br.value/p.max*barMaxW, 1)
				}
				fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`, labelW-8, y+barH-4, html.EscapeString(br.label))
				fmt.Fprintf(&b, `<rect class="bar" x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`, labelW, y, w, barH, br.color)
				fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s/s</text>`+"\n", float64(labelW)+w+6, y+barH-4, num(br.value, 0))
				y += barH + gap
			}
			y += groupGap
		}
		y += panelGap
	}
	b.WriteString("</svg>\n")
	return b.String()
}
