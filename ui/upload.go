package ui

import (
	"context"
	"fmt"
	"strconv"

	"pipeplan/app"
	"pipeplan/core/model"
)

// uploadInputID is the file input of the Plan page's profile upload.
const uploadInputID = "profile-file"

// UploadProfile reads the file chosen in the profile upload input and plans
// it. The file stays in the page: a share link names it but cannot carry it.
func (a *App) UploadProfile() {
	env := a.env
	mb := a.UploadMicrobatch
	a.browser.ReadFile(uploadInputID, func(name string, data []byte, err error) {
		if env != nil {
			env.Lock()
			defer env.UnlockRender()
		}
		if err == nil {
			var p model.Profile
			if p, err = app.ParseUploadedProfile(name, data, mb); err == nil {
				a.uploaded = &p
				a.State.Plan.Model, a.State.Plan.Selected = app.UploadedID, 0
				a.changed()
				return
			}
		}
		a.Err = "Upload profile: " + err.Error()
	})
}

// SetUploadMicrobatch sets the minibatch size assumed for a graph.txt upload.
func (a *App) SetUploadMicrobatch(value string) {
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 {
		a.Err = fmt.Sprintf("upload minibatch: must be an integer >= 1, got %q", value)
		return
	}
	a.UploadMicrobatch = n
}

// planUploaded plans the uploaded profile, or explains that a link cannot carry it.
func (a *App) planUploaded(ctx context.Context, progress func(float64)) (app.Result, error) {
	if a.uploaded == nil {
		return app.Result{}, fmt.Errorf("this link names an uploaded profile, which links do not carry: upload the file again or pick a preset")
	}
	return app.PlanProfile(ctx, *a.uploaded, a.State.Plan, progress)
}
