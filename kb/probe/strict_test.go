package probe

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
	netutils "k8s.io/utils/net"
)

// The values KEP-4858's strict validation newly refuses, by the KEP's three rules, and the
// ones it leaves alone: valid in both, or refused by both.
var strictCases = []struct {
	format, value string
	refused       bool
}{
	{StrictIP, "10.0.0.1", false},
	{StrictIP, "0.0.0.0", false},
	{StrictIP, "010.0.0.1", true},      // leading zeros: libc reads 8.0.0.1
	{StrictIP, "10.000.0.1", true},     // a zero octet spelt with leading zeros
	{StrictIP, "::ffff:1.2.3.4", true}, // IPv4-mapped IPv6
	{StrictIP, "::FFFF:1.2.3.4", true},
	{StrictIP, "0:0:0:0:0:ffff:102:304", true},
	{StrictIP, "2001:db8::1", false},
	{StrictIP, "2001:DB8:0:0::1", false}, // not canonical: only a warning for legacy fields
	{StrictIP, "fe80::0123", false},      // leading zeros in an IPv6 group are fine
	{StrictIP, " 010.0.0.1 ", true},      // white space around is ignored
	{StrictIP, "example.com", false},     // refused by both
	{StrictIP, "1.2.3.4.5", false},
	{StrictIP, "", false},
	{StrictCIDR, "10.0.0.0/8", false},
	{StrictCIDR, "0.0.0.0/0", false},
	{StrictCIDR, "192.168.1.5/24", true}, // bits set past the prefix length
	{StrictCIDR, "192.168.1.5/32", false},
	{StrictCIDR, "10.0.0.1/0", true},
	{StrictCIDR, "010.0.0.0/8", true},
	{StrictCIDR, "10.0.0.0/08", true}, // a prefix length with a leading zero
	{StrictCIDR, "::ffff:10.0.0.0/104", true},
	{StrictCIDR, "2001:db8::/32", false},
	{StrictCIDR, "2001:db8::1/64", true},
	{StrictCIDR, "2001:DB8::/32", false}, // not canonical: only a warning
	{StrictCIDR, " 10.0.0.0/8", false},   // loadBalancerSourceRanges may be space-padded
	{StrictCIDR, " 10.0.0.5/8 ", true},
	{StrictCIDR, "10.0.0.0", false}, // not a CIDR at all
	{StrictCIDR, "10.0.0.0/33", false},
	{"", "010.0.0.1", false},
}

func TestStrictInvalidFindsWhatKEP4858NewlyRefuses(t *testing.T) {
	for _, c := range strictCases {
		if got := strictInvalid(c.format, c.value); got != c.refused {
			t.Errorf("strictInvalid(%q, %q) = %v, want %v", c.format, c.value, got, c.refused)
		}
	}
}

func TestAStrictInvalidProbeRecordsOnlyTheObjectsHoldingRefusedValues(t *testing.T) {
	s := mustSet(t,
		Spec{ID: "external-ips", Kinds: []string{"core/Service"}, Path: "spec.externalIPs[*]", Values: true, StrictInvalid: StrictIP},
		Spec{ID: "source-ranges", Kinds: []string{"core/Service"}, Path: "spec.loadBalancerSourceRanges[*]", StrictInvalid: StrictCIDR},
	)
	o := observeAll(s, []input{
		in(t, "", "Service", "clean", `{"spec":{"externalIPs":["10.0.0.1"],"loadBalancerSourceRanges":["10.0.0.0/8"]}}`),
		// The refused value is the second: a probe without values must not stop at the first.
		in(t, "", "Service", "octal", `{"spec":{"externalIPs":["10.0.0.2","010.0.0.1","::ffff:1.2.3.4"]}}`),
		in(t, "", "Service", "host-bits", `{"spec":{"loadBalancerSourceRanges":["10.0.0.0/8","192.168.1.5/24"]}}`),
	})
	probes := o.Probes()
	if p := probes[0]; p.ID != "kb/external-ips" || p.Count != 1 || p.Examined != 3 ||
		!equalObjects(p.Objects, []inventory.ProbeObject{ref("", "Service", "octal", "010.0.0.1", "::ffff:1.2.3.4")}) {
		t.Errorf("external-ips observed %+v", p)
	}
	if p := probes[1]; p.ID != "kb/source-ranges" || p.Count != 1 || len(p.Objects) != 1 || p.Objects[0].Name != "host-bits" {
		t.Errorf("source-ranges observed %+v", p)
	}
}

func equalObjects(a, b []inventory.ProbeObject) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || strings.Join(a[i].Values, ",") != strings.Join(b[i].Values, ",") {
			return false
		}
	}
	return true
}

func TestStrictInvalidIsAFilterOfPresentProbesWithAKnownFormat(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{ID: "a", Kinds: []string{"core/Service"}, Path: "spec.clusterIP", StrictInvalid: "ipv4"}, `strictInvalid "ipv4": want ip or cidr`},
		{Spec{ID: "a", Kinds: []string{"core/Service"}, Path: "spec.clusterIP", Match: MatchAbsent, StrictInvalid: StrictIP}, "an absent-mode probe finds none"},
	} {
		if err := Validate(c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want an error containing %q", c.spec, err, c.want)
		}
	}
	a := Spec{ID: "a", Kinds: []string{"core/Service"}, Path: "spec.clusterIP", StrictInvalid: StrictIP}
	b := a
	b.StrictInvalid = ""
	if Equal(a, b) {
		t.Error("Equal says a probe narrowed to strictly invalid IPs observes what an unnarrowed one does")
	}
}

// keprules is a second reading of KEP-4858's rules, written from its text rather than from
// apimachinery's validators: the legacy parsers (Go 1.16's, kept as ParseIPSloppy and
// ParseCIDRSloppy) accept the value, and it has an IPv4 octet or a prefix length with a
// leading zero, or an IPv4-mapped IPv6 address, or (a CIDR) bits set past its prefix length.
func keprules(format, value string) bool {
	v := strings.TrimSpace(value)
	addr, prefix, isCIDR := strings.Cut(v, "/")
	if (format == StrictCIDR) != isCIDR {
		return false
	}
	switch format {
	case StrictIP:
		if netutils.ParseIPSloppy(v) == nil {
			return false
		}
	case StrictCIDR:
		if _, _, err := netutils.ParseCIDRSloppy(v); err != nil {
			return false
		}
	default:
		return false
	}
	if len(prefix) > 1 && prefix[0] == '0' {
		return true
	}
	dotted := addr[strings.LastIndex(addr, ":")+1:]
	if strings.Contains(dotted, ".") {
		for _, octet := range strings.Split(dotted, ".") {
			if len(octet) > 1 && octet[0] == '0' {
				return true
			}
		}
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return true // the legacy parser took what Go's no longer does
	}
	if ip.Is4In6() {
		return true
	}
	if format == StrictCIDR {
		p, err := netip.ParsePrefix(v)
		return err != nil || p.Masked().Addr() != p.Addr()
	}
	return false
}

func FuzzStrictInvalidFollowsKEP4858(f *testing.F) {
	for _, c := range strictCases {
		f.Add(c.format == StrictCIDR, c.value)
	}
	f.Fuzz(func(t *testing.T, cidr bool, value string) {
		format := StrictIP
		if cidr {
			format = StrictCIDR
		}
		if got, want := strictInvalid(format, value), keprules(format, value); got != want {
			t.Errorf("strictInvalid(%q, %q) = %v; KEP-4858's rules say %v", format, value, got, want)
		}
	})
}
