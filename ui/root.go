package ui

import (
	"slices"

	"github.com/vugu/vugu"
)

// Root is the playground's top component: the header with the page tabs and
// the share/export actions, the error banner, and the open page.
type Root struct {
	// App is the shared application model.
	App *App
}

// tab is one header tab as rendered.
type tab struct {
	ID, Title, Class string
	// Selected is "true" for the open page's tab (aria-selected).
	Selected string
}

var tabTitles = map[string]string{"plan": "Plan", "cluster": "Cluster", "cost": "Cost"}

func (c *Root) tabs() []tab {
	out := make([]tab, 0, len(tabTitles))
	for _, id := range stateTabs() {
		t := tab{ID: id, Title: tabTitles[id], Class: "tab", Selected: "false"}
		if id == c.App.State.Tab {
			t.Class, t.Selected = "tab current", "true"
		}
		out = append(out, t)
	}
	return out
}

// tabKey moves between the page tabs with the arrow, Home and End keys
// (the WAI-ARIA tabs pattern); Tab + Enter or Space work as on any button.
func (c *Root) tabKey(event vugu.DOMEvent, id string) {
	tabs := stateTabs()
	i := slices.Index(tabs, id)
	switch event.PropString("key") {
	case "ArrowRight":
		i = (i + 1) % len(tabs)
	case "ArrowLeft":
		i = (i + len(tabs) - 1) % len(tabs)
	case "Home":
		i = 0
	case "End":
		i = len(tabs) - 1
	default:
		return
	}
	event.PreventDefault()
	c.App.SetTab(tabs[i])
	c.App.browser.Focus("tab-" + tabs[i])
}
