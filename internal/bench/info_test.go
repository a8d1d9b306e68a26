package bench

import (
	"regexp"
	"strings"
	"testing"

	"github.com/seed-53d105c9/courier/lua"
)

// TestScriptInternalCommands keeps the bench's list of commands that scripts
// run inside Redis in step with the scripts, so redis_calls_per_job counts
// only what clients send. Every script counts: the leader's (trim, fire) and
// the lock's (written in lower case, as Redisson's) run during a bench too.
func TestScriptInternalCommands(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`redis\.call\('([A-Za-z]+)'`)
	for name, src := range lua.All() {
		for _, m := range re.FindAllStringSubmatch(src, -1) {
			if cmd := strings.ToLower(m[1]); !scriptInternal[cmd] {
				t.Errorf("%s.lua calls %s, which scriptInternal does not list", name, cmd)
			}
		}
	}
}
