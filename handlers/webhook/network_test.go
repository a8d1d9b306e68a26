package webhook

import (
	"net/netip"
	"testing"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr string
		want string // "" for allowed
	}{
		{"0.0.0.0", "an unspecified address"},
		{"0.1.2.3", `a "this network" address`},
		{"10.0.0.1", "a private address"},
		{"10.255.255.255", "a private address"},
		{"100.64.0.1", "a shared (carrier-grade NAT) address"},
		{"100.127.255.255", "a shared (carrier-grade NAT) address"},
		{"127.0.0.1", "a loopback address"},
		{"127.255.0.9", "a loopback address"},
		{"169.254.169.254", "a link-local address"},
		{"172.16.0.1", "a private address"},
		{"172.31.255.255", "a private address"},
		{"192.0.0.8", "an IETF protocol assignment address"},
		{"192.168.1.1", "a private address"},
		{"198.18.0.1", "a benchmarking address"},
		{"198.19.255.255", "a benchmarking address"},
		{"224.0.0.1", "a multicast address"},
		{"239.255.255.250", "a multicast address"},
		{"240.0.0.1", "a reserved address"},
		{"255.255.255.254", "a reserved address"},
		{"255.255.255.255", "the broadcast address"},

		{"::", "an unspecified address"},
		{"::1", "a loopback address"},
		{"::ffff:127.0.0.1", "a loopback address"},
		{"::ffff:10.1.2.3", "a private address"},
		{"::ffff:169.254.169.254", "a link-local address"},
		{"::127.0.0.1", "an IPv4-compatible address of 127.0.0.1, a loopback address"},
		{"64:ff9b::7f00:1", "a NAT64 address of 127.0.0.1, a loopback address"},
		{"64:ff9b::a9fe:a9fe", "a NAT64 address of 169.254.169.254, a link-local address"},
		{"64:ff9b:1::a00:1", "a local-use NAT64 address"},
		{"64:ff9b:1:ffff::1", "a local-use NAT64 address"},
		{"2002:7f00:1::", "a 6to4 address of 127.0.0.1, a loopback address"},
		{"2002:c0a8:101::1", "a 6to4 address of 192.168.1.1, a private address"},
		{"fc00::1", "a unique-local address"},
		{"fd12:3456::1", "a unique-local address"},
		{"fe80::1", "a link-local address"},
		{"fe80::1%eth0", "a link-local address"},
		{"febf::1", "a link-local address"},
		{"fec0::1", "a site-local address"},
		{"ff02::1", "a multicast address"},

		{"1.1.1.1", ""},
		{"8.8.8.8", ""},
		{"93.184.215.14", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"172.15.255.255", ""},
		{"172.32.0.0", ""},
		{"192.0.1.1", ""},
		{"198.17.255.255", ""},
		{"198.20.0.0", ""},
		{"223.255.255.255", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""},
		{"2002:808:808::1", ""},
		{"2606:4700:4700::1111", ""},
		{"2001:4860:4860::8888", ""},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			if got := classify(netip.MustParseAddr(tt.addr)); got != tt.want {
				t.Errorf("classify(%s) = %q; want %q", tt.addr, got, tt.want)
			}
		})
	}
}

func TestNetPolicy(t *testing.T) {
	t.Parallel()
	p := netPolicy{allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
	tests := []struct {
		addr string
		want string // the error, or "" for allowed
	}{
		{"10.1.2.3", ""},
		{"::ffff:10.1.2.3", ""},
		{"::1", ""},
		{"8.8.8.8", ""},
		{"127.0.0.1", "refused to connect to 127.0.0.1: a loopback address; list its network in allow_networks to allow it"},
		{"::ffff:127.0.0.1", "refused to connect to 127.0.0.1: a loopback address; list its network in allow_networks to allow it"},
		{"192.168.0.1", "refused to connect to 192.168.0.1: a private address; list its network in allow_networks to allow it"},
		{"fe80::1%eth0", "refused to connect to fe80::1: a link-local address; list its network in allow_networks to allow it"},
	}
	for _, tt := range tests {
		err := p.check(netip.MustParseAddr(tt.addr))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("check(%s) = %q; want %q", tt.addr, got, tt.want)
		}
	}
}
