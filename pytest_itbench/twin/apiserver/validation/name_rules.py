"""The string rules of k8s.io/apimachinery/pkg/util/validation: names, label keys and values, ports.

Each check returns the list of upstream messages (empty when the value is
fine); callers turn them into field errors at their own paths, exactly as
the Go validators do.
"""

from __future__ import annotations

import re
from typing import Callable

NameRule = Callable[[str, bool], list[str]]  # (name, is a generateName prefix) -> messages

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = rf"{_LABEL}(\.{_LABEL})*"
_DNS1035 = r"[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = rf"({_QUALIFIED})?"
_ENV_VAR = r"[-._a-zA-Z][-._a-zA-Z0-9]*"
_CONFIG_KEY = r"[-._a-zA-Z0-9]+"
_PERCENT = r"[0-9]+%"
_WILDCARD_SUBDOMAIN = rf"\*\.{_SUBDOMAIN}"

_label_re = re.compile(_LABEL)
_subdomain_re = re.compile(_SUBDOMAIN)
_dns1035_re = re.compile(_DNS1035)
_qualified_re = re.compile(_QUALIFIED)
_label_value_re = re.compile(_LABEL_VALUE)
_env_var_re = re.compile(_ENV_VAR)
_config_key_re = re.compile(_CONFIG_KEY)
_percent_re = re.compile(_PERCENT)
_wildcard_re = re.compile(_WILDCARD_SUBDOMAIN)
_port_name_chars = re.compile(r"[-a-z0-9]+")
_http_header_re = re.compile(r"[-A-Za-z0-9]+")

LABEL_MAX = 63
SUBDOMAIN_MAX = 253


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """Upstream's RegexError: the message, examples joined the way Go joins them, and the regex."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


_SUBDOMAIN_MSG = regex_error("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                             "'-' or '.', and must start and end with an alphanumeric character", _SUBDOMAIN,
                             "example.com")
_LABEL_MSG = regex_error("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                         "and must start and end with an alphanumeric character", _LABEL, "my-name", "123-abc")
_DNS1035_MSG = regex_error("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
                           "with an alphabetic character, and end with an alphanumeric character", _DNS1035,
                           "my-name", "abc-123")
_QUALIFIED_MSG = regex_error("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                             "with an alphanumeric character", _QUALIFIED, "MyName", "my.name", "123-abc")
_LABEL_VALUE_MSG = regex_error("a valid label must be an empty string or consist of alphanumeric characters, '-', "
                               "'_' or '.', and must start and end with an alphanumeric character", _LABEL_VALUE,
                               "MyValue", "my_value", "12345")
_ENV_VAR_MSG = regex_error("a valid environment variable name must consist of alphabetic characters, digits, '_', "
                           "'-', or '.', and must not start with a digit", _ENV_VAR, "my.env-name", "MY_ENV.NAME",
                           "MyEnvName1")
_CONFIG_KEY_MSG = regex_error("a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                              _CONFIG_KEY, "key.name", "KEY_NAME", "key-name")
_PERCENT_MSG = regex_error("a valid percent string must be a numeric string followed by an ending '%'", _PERCENT,
                           "1%", "93%")
_WILDCARD_MSG = regex_error("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, "
                            "which must consist of lower case alphanumeric characters, '-' or '.' and end with an "
                            "alphanumeric character", _WILDCARD_SUBDOMAIN, "*.example.com")


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = [max_len_error(SUBDOMAIN_MAX)] if len(value) > SUBDOMAIN_MAX else []
    if not _subdomain_re.fullmatch(value):
        errs.append(_SUBDOMAIN_MSG)
    return errs


def is_dns1123_label(value: str) -> list[str]:
    errs = [max_len_error(LABEL_MAX)] if len(value) > LABEL_MAX else []
    if not _label_re.fullmatch(value):
        errs.append("must not contain dots" if _subdomain_re.fullmatch(value) else _LABEL_MSG)
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs = [max_len_error(LABEL_MAX)] if len(value) > LABEL_MAX else []
    if not _dns1035_re.fullmatch(value):
        errs.append(_DNS1035_MSG)
    return errs


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    errs = [max_len_error(SUBDOMAIN_MAX)] if len(value) > SUBDOMAIN_MAX else []
    if not _wildcard_re.fullmatch(value):
        errs.append(_WILDCARD_MSG)
    return errs


def is_qualified_name(value: str) -> list[str]:
    """A label key or annotation key: ``name`` or ``dns.prefix/name``."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in is_dns1123_subdomain(prefix)]
    else:
        return [f"a qualified name {_QUALIFIED_MSG} with an optional DNS subdomain prefix and '/' (e.g. "
                f"'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > LABEL_MAX:
        errs.append("name part " + max_len_error(LABEL_MAX))
    if not _qualified_re.fullmatch(name):
        errs.append("name part " + _QUALIFIED_MSG)
    return errs


def is_valid_label_value(value: str) -> list[str]:
    errs = [max_len_error(LABEL_MAX)] if len(value) > LABEL_MAX else []
    if not _label_value_re.fullmatch(value):
        errs.append(_LABEL_VALUE_MSG)
    return errs


def _dot_prefix(value: str) -> list[str]:
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def is_env_var_name(value: str) -> list[str]:
    errs = [] if _env_var_re.fullmatch(value) else [_ENV_VAR_MSG]
    return errs + _dot_prefix(value)


def is_config_map_key(value: str) -> list[str]:
    errs = [max_len_error(SUBDOMAIN_MAX)] if len(value) > SUBDOMAIN_MAX else []
    if not _config_key_re.fullmatch(value):
        errs.append(_CONFIG_KEY_MSG)
    return errs + _dot_prefix(value)


def is_valid_percent(value: str) -> list[str]:
    return [] if _percent_re.fullmatch(value) else [_PERCENT_MSG]


def is_valid_port_num(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else ["must be between 1 and 65535, inclusive"]


def is_valid_port_name(port: str) -> list[str]:
    errs = [max_len_error(15)] if len(port) > 15 else []
    if not _port_name_chars.fullmatch(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def is_http_header_name(value: str) -> list[str]:
    if _http_header_re.fullmatch(value):
        return []
    return [regex_error("a valid HTTP header must consist of alphanumeric characters or '-'", "[-A-Za-z0-9]+",
                        "X-Header-Name")]


# ---- name rules for ObjectMeta: (name, prefix) -> messages ---------------------------------------

def _mask_trailing_dash(name: str) -> str:
    # A generateName may end in '-': upstream replaces the last two characters with "a" before checking.
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


def name_is_path_segment(name: str, prefix: bool) -> list[str]:
    """Names that only need to be usable in a URL path (RBAC roles and bindings)."""
    errs = []
    if not prefix and name in (".", ".."):
        errs.append(f"may not be '{name}'")
    for bad in ("/", "%"):
        if bad in name:
            errs.append(f"may not contain '{bad}'")
    return errs
