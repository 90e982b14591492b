package check

import rego.v1

# CIS Red Hat Enterprise Linux 9 Benchmark 7.1.5: Ensure permissions on /etc/shadow are configured. input: {host: mode of /etc/shadow (as a decimal number)}.

default result := false

ok(v) if {
    is_string(v)
    regex.match(`^[0-9]+$`, v)
    bits.and(to_number(v), 4095) == 0
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
