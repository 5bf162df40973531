package ui

// Root is the playground's top component: the header with the page tabs and
// the share/export actions, the error banner, and the open page.
type Root struct {
	// App is the shared application model.
	App *App
}

// tab is one header tab as rendered.
type tab struct {
	ID, Title, Class string
}

var tabTitles = map[string]string{"plan": "Plan", "cluster": "Cluster", "cost": "Cost"}

func (c *Root) tabs() []tab {
	out := make([]tab, 0, len(tabTitles))
	for _, id := range stateTabs() {
		cls := "tab"
		if id == c.App.State.Tab {
			cls = "tab current"
		}
		out = append(out, tab{ID: id, Title: tabTitles[id], Class: cls})
	}
	return out
}
