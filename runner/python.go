package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// defaultPythons are the interpreters tried in order when --python is not
// given: the PATH's python3, then Debian's, where python3-torch installs.
var defaultPythons = []string{"python3", "/usr/bin/python3"}

// importTimeout bounds one `import torch` check (importing torch is slow).
const importTimeout = 2 * time.Minute

// findPython returns the first candidate that check accepts, or an error
// listing why each was rejected.
func findPython(ctx context.Context, candidates []string, check func(context.Context, string) error) (string, error) {
	var why []string
	for _, c := range candidates {
		err := check(ctx, c)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("%w while probing %s for torch", context.Cause(ctx), c)
		}
		why = append(why, fmt.Sprintf("%s: %v", c, err))
	}
	return "", fmt.Errorf("no python with torch found (tried %s); install Debian's python3-torch or pip's torch, or pass --python", strings.Join(why, "; "))
}

// importsTorch checks that python exists and can import torch.
func importsTorch(ctx context.Context, python string) error {
	path, err := exec.LookPath(python)
	if err != nil {
		return fmt.Errorf("not found")
	}
	ctx, cancel := context.WithTimeout(ctx, importTimeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "-c", "import torch, torch.distributed")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("cannot import torch (%v: %s)", err, lastLine(stderr.String()))
	}
	return nil
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// cudaDeviceName is torch's name of CUDA device 0, for the report's
// comparison with the plan's GPU.
func cudaDeviceName(ctx context.Context, python string) (string, error) {
	out, err := exec.CommandContext(ctx, python, "-c", "import torch; print(torch.cuda.get_device_name(0))").Output()
	if err != nil {
		return "", fmt.Errorf("naming the CUDA device (%s): %w", python, err)
	}
	return strings.TrimSpace(string(out)), nil
}
