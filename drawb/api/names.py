"""Name validation with the Kubernetes API server's limits and messages.

Two layers, both returning a list of error strings (empty when valid):

* ``is_*``: the message lists of ``k8s.io/apimachinery/pkg/util/validation`` (release-1.34
  wording; from 1.35 the label-key and label-value functions say "bytes" instead of
  "characters" and "a valid label key" instead of "a qualified name").
* ``validate_*``: the DRA field checks of ``k8s.io/kubernetes/pkg/apis/resource/validation``
  (release-1.34), each error rendered as ``field.Error.Error()`` prints it, for example
  ``spec.driver: Invalid value: "Foo_": a lowercase RFC 1123 subdomain must ...``.

Lengths are counted in UTF-8 bytes, as Go's ``len`` does.
"""

from __future__ import annotations

import re
from typing import Final

from drawb.api._go import go_quote

__all__ = [
    "DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH",
    "DEVICE_MAX_DOMAIN_LENGTH",
    "DEVICE_MAX_ID_LENGTH",
    "DNS1123_LABEL_MAX_LENGTH",
    "DNS1123_SUBDOMAIN_MAX_LENGTH",
    "DRIVER_NAME_MAX_LENGTH",
    "POOL_NAME_MAX_LENGTH",
    "field_key",
    "invalid",
    "is_c_identifier",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_label_value",
    "is_qualified_name",
    "required",
    "too_long",
    "validate_device_class_name",
    "validate_device_name",
    "validate_driver_name",
    "validate_fully_qualified_name",
    "validate_pool_name",
    "validate_qualified_name",
    "validate_request_name",
    "validate_string_value",
    "validate_version_value",
]

DNS1123_LABEL_MAX_LENGTH: Final = 63
DNS1123_SUBDOMAIN_MAX_LENGTH: Final = 253
DNS1035_LABEL_MAX_LENGTH: Final = 63
QUALIFIED_NAME_MAX_LENGTH: Final = 63
LABEL_VALUE_MAX_LENGTH: Final = 63
DRIVER_NAME_MAX_LENGTH: Final = 63
POOL_NAME_MAX_LENGTH: Final = 253
DEVICE_MAX_DOMAIN_LENGTH: Final = 63
DEVICE_MAX_ID_LENGTH: Final = 32
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH: Final = 64
ATTRIBUTE_KEY_MAX_LENGTH: Final = DEVICE_MAX_DOMAIN_LENGTH + 1 + DEVICE_MAX_ID_LENGTH

_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT: Final = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG: Final = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
_C_IDENTIFIER_FMT: Final = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENTIFIER_MSG: Final = (
    "a valid C identifier must start with alphabetic character or '_', "
    "followed by a string of alphanumeric characters or '_'"
)
_QUALIFIED_NAME_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT: Final = "(" + _QUALIFIED_NAME_FMT + ")?"
_LABEL_VALUE_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)

# Go's regexp ^…$ anchors at the very end of the text; Python needs fullmatch for that.
_DNS1123_LABEL_RE: Final = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE: Final = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE: Final = re.compile(_DNS1035_LABEL_FMT)
_C_IDENTIFIER_RE: Final = re.compile(_C_IDENTIFIER_FMT)
_QUALIFIED_NAME_RE: Final = re.compile(_QUALIFIED_NAME_FMT)
_LABEL_VALUE_RE: Final = re.compile(_LABEL_VALUE_FMT)


def _len(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


def max_len_error(length: int) -> str:
    """apimachinery ``MaxLenError``."""
    return f"must be no more than {length} characters"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery ``RegexError``: the message, examples and the regular expression."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    return msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{fmt}')"


def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``: at most 63 characters of [-a-z0-9], alphanumeric at both ends."""
    errs = []
    if _len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: at most 253 characters, dot-separated DNS-1123 labels."""
    errs = []
    if _len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``: like a DNS-1123 label but starting with a letter."""
    errs = []
    if _len(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_c_identifier(value: str) -> list[str]:
    """``IsCIdentifier``: [A-Za-z_][A-Za-z0-9_]* (no length limit of its own)."""
    if _C_IDENTIFIER_RE.fullmatch(value):
        return []
    return [regex_error(_C_IDENTIFIER_MSG, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")]


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` (label and annotation keys): ``[prefix/]name``, prefix a DNS subdomain."""
    errs = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _len(name) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append("name part " + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``: empty, or at most 63 characters like a qualified name part."""
    errs = []
    if _len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


# --- field errors as the API server prints them ------------------------------------------------


def invalid(path: str, value: str, detail: str) -> str:
    """``field.Invalid(path, value, detail).Error()`` for a string value."""
    return f"{path}: Invalid value: {go_quote(value)}: {detail}"


def required(path: str, detail: str = "") -> str:
    """``field.Required(path, detail).Error()``."""
    return f"{path}: Required value: {detail}" if detail else f"{path}: Required value"


def too_long(path: str, max_length: int) -> str:
    """``field.TooLong(path, _, max).Error()``."""
    unit = "byte" if max_length == 1 else "bytes"
    return f"{path}: Too long: may not be more than {max_length} {unit}"


def field_key(path: str, key: str, max_len: int = ATTRIBUTE_KEY_MAX_LENGTH) -> str:
    """``path[key]`` with the key shortened in the middle as DRA's ``validateMap`` does."""
    max_len = max(max_len, 16)
    if _len(key) > max_len:
        raw = key.encode("utf-8", "surrogatepass")
        remaining = max_len - 3
        key = (raw[: (remaining + 1) // 2] + b"..." + raw[len(raw) - remaining // 2 :]).decode("utf-8", "replace")
    return f"{path}[{key}]"


def validate_driver_name(name: str, path: str = "spec.driver") -> list[str]:
    """A DRA driver name (``ValidateCSIDriverName``): DNS subdomain after lower-casing, at most 63 bytes."""
    errs = []
    if not name:
        errs.append(required(path))
    if _len(name) > DRIVER_NAME_MAX_LENGTH:
        errs.append(too_long(path, DRIVER_NAME_MAX_LENGTH))
    errs.extend(invalid(path, name, m) for m in is_dns1123_subdomain(name.lower()))
    return errs


def validate_pool_name(name: str, path: str = "spec.pool.name") -> list[str]:
    """A pool name: at most 253 bytes, DNS subdomains separated by '/'."""
    if not name:
        return [required(path)]
    errs = []
    if _len(name) > POOL_NAME_MAX_LENGTH:
        errs.append(too_long(path, POOL_NAME_MAX_LENGTH))
    for part in name.split("/"):
        errs.extend(invalid(path, part, m) for m in is_dns1123_subdomain(part))
    return errs


def validate_device_name(name: str, path: str = "name") -> list[str]:
    """A device (also counter-set and counter) name: a DNS-1123 label."""
    return [invalid(path, name, m) for m in is_dns1123_label(name)]


def validate_request_name(name: str, path: str = "name") -> list[str]:
    """A request or subrequest name: a DNS-1123 label."""
    return [invalid(path, name, m) for m in is_dns1123_label(name)]


def validate_device_class_name(name: str, path: str = "deviceClassName") -> list[str]:
    """A DeviceClass name: a DNS-1123 subdomain."""
    return [invalid(path, name, m) for m in is_dns1123_subdomain(name)]


def _validate_c_identifier(ident: str, path: str) -> list[str]:
    errs = []
    if _len(ident) > DEVICE_MAX_ID_LENGTH:
        errs.append(too_long(path, DEVICE_MAX_ID_LENGTH))
    errs.extend(invalid(path, ident, m) for m in is_c_identifier(ident))
    return errs


def validate_qualified_name(name: str, path: str) -> list[str]:
    """A DRA attribute or capacity name: C identifier (≤32) or ``<domain ≤63>/<C identifier ≤32>``.

    Like Kubernetes 1.34, a name with more than one '/' yields no error here.
    """
    if not name:
        return [required(path, "name required")]
    parts = name.split("/")
    if len(parts) == 1:
        return _validate_c_identifier(parts[0], path)
    errs = []
    if len(parts) == 2:
        domain, ident = parts
        if not domain:
            errs.append(required(path, "the domain must not be empty"))
        else:
            errs.extend(validate_driver_name(domain, path))
        if not ident:
            errs.append(required(path, "the name must not be empty"))
        else:
            errs.extend(_validate_c_identifier(ident, path))
    return errs


_NUMERIC_ID: Final = "(0|[1-9][0-9]*)"
_PRERELEASE_ID: Final = "(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD_ID: Final = "[0-9a-zA-Z-]+"
_VERSION_VALUE_RE: Final = re.compile(
    rf"{_NUMERIC_ID}\.{_NUMERIC_ID}\.{_NUMERIC_ID}"
    rf"(-{_PRERELEASE_ID}(\.{_PRERELEASE_ID})*)?"
    rf"(\+{_BUILD_ID}(\.{_BUILD_ID})*)?"
)


def validate_string_value(value: str, path: str) -> list[str]:
    """A device attribute's ``string`` value: at most 64 bytes."""
    if _len(value) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
        return [too_long(path, DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH)]
    return []


def validate_version_value(value: str, path: str) -> list[str]:
    """A device attribute's ``version`` value: semver.org 2.0.0 syntax, at most 64 bytes."""
    errs = []
    if not _VERSION_VALUE_RE.fullmatch(value):
        errs.append(invalid(path, value, "must be a string compatible with semver.org spec 2.0.0"))
    errs.extend(validate_string_value(value, path))
    return errs


def validate_fully_qualified_name(name: str, path: str) -> list[str]:
    """A DRA name that must carry a domain (``matchAttribute``, ``distinctAttribute``)."""
    errs = validate_qualified_name(name, path)
    if name and "/" not in name:
        errs.append(invalid(path, name, "must include a domain"))
    return errs
