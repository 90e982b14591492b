package check

import rego.v1

# CIS Red Hat Enterprise Linux 9 Benchmark 3.3.1: Ensure IP forwarding is disabled. input: {host: running value of net.ipv4.ip_forward}.

default result := false

ok(v) if {
    is_string(v)
    trim_space(v) == "0"
}

violations contains host if {
    some host, v in input
    not ok(v)
}

result if {
    is_object(input)
    count(input) > 0
    count(violations) == 0
}
