package chaos

import "testing"

func TestInfoField(t *testing.T) {
	t.Parallel()
	info := "# Replication\r\nrole:slave\r\nmaster_link_status:up\r\n"
	if infoField(info, "role") != "slave" || infoField(info, "master_link_status") != "up" || infoField(info, "nope") != "" {
		t.Errorf("infoField misread %q", info)
	}
}
