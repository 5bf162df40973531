package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"pipeplan/app"
	"pipeplan/app/request"
)

func init() {
	register("gavel throughput", command{
		summary: "predict a planned job's throughput on each Gavel worker type (a row of Gavel's matrix T)",
		run:     runGavelThroughput,
	})
}

func runGavelThroughput(args []string, stdout io.Writer) error {
	fs := newFlagSet("gavel throughput")
	planFile := fs.String("plan", "", "the Plan page's inputs as JSON (the body of POST /api/plan; default: its defaults)")
	model := fs.String("model", "", "model preset id, overriding the plan's (see pipeplan's Plan page)")
	scale := fs.Int("scale", 1, "the job's GPU count (scale factor)")
	types := fs.String("worker-types", "", "comma-separated worker types: Gavel's (v100,p100,k80) or gpus.json ids (default Gavel's)")
	priceList := fs.String("price-list", "", "add a steps-per-dollar column to the table at this price list's prices (gpuprofiles/cloud.json ids)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	data := []byte("{}")
	if *planFile != "" {
		var err error
		if data, err = os.ReadFile(*planFile); err != nil {
			return fmt.Errorf("gavel throughput: --plan: %w", err)
		}
	}
	req, err := request.DecodePlan(data)
	if err != nil {
		return fmt.Errorf("gavel throughput: --plan: %w", err)
	}
	if *model != "" {
		req.Model = *model
	}
	var wts []string
	if *types != "" {
		wts = strings.Split(*types, ",")
	}
	res, err := app.PlannedThroughput(context.Background(), req, *scale, wts)
	if err != nil {
		return fmt.Errorf("gavel throughput: %w", err)
	}
	perDollar := make([]string, len(res.WorkerTypes)) // steps per dollar, or why not
	if *priceList != "" {
		list, err := app.PriceListByID(*priceList)
		if err != nil {
			return fmt.Errorf("gavel throughput: --price-list: %w", err)
		}
		for j, wt := range res.WorkerTypes {
			price, err := list.ForWorkerTypes([]string{wt})
			if err != nil {
				perDollar[j] = "no price"
				continue
			}
			perDollar[j] = fmt.Sprintf("%.4g", res.StepsPerSecond[j]*3600/(price[0]*float64(res.ScaleFactor)))
		}
	}
	if *asJSON {
		return writeJSON(stdout, res)
	}
	tw := newTable(stdout)
	fmt.Fprintln(tw, "worker type\tsteps/s\tsteps/$\tsource")
	for j, wt := range res.WorkerTypes {
		fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\n", wt, res.StepsPerSecond[j], perDollar[j], res.Sources[j])
		if res.UnconsolidatedStepsPerSecond != nil {
			fmt.Fprintf(tw, "%s (GPUs on separate servers)\t%.4g\t\t%s\n", wt, res.UnconsolidatedStepsPerSecond[j], res.UnconsolidatedSources[j])
		}
	}
	return tw.Flush()
}
