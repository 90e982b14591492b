package check

import rego.v1

# CIS Red Hat Enterprise Linux 9 Benchmark 5.6.1.1: Ensure password expiration is 365 days or less. input: {host: PASS_MAX_DAYS in /etc/login.defs}.

default result := false

ok(v) if {
    is_string(v)
    regex.match(`^[0-9]+$`, v)
    to_number(v) > 0
    to_number(v) <= 365
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
