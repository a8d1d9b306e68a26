package chaos

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildCourier builds the courier command of the daemon's module (cmd/,
// the module the current directory is in) into dir and returns the binary's path.
func BuildCourier(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == "/dev/null" {
		return "", fmt.Errorf("build courier: %s is not inside the daemon's module (cmd/)", dir)
	}
	bin := filepath.Join(dir, "courier")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./courier")
	cmd.Dir = filepath.Dir(gomod)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./courier: %w\n%s", err, out)
	}
	return bin, nil
}
