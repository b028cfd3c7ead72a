"""What else differs between the Kubernetes minors drawb knows: the release each minor's facts come
from, the ``resource.k8s.io`` versions its API server has, and named behaviours with the minor they
start in (code asks ``rules(v).has("...")``, never compares minors)."""

from __future__ import annotations

# The patch release whose facts drawb carries, per minor (the k8s.io/kubernetes module version the
# tests read them from and the local control plane is built from).
RELEASES: dict[int, str] = {34: "v1.34.4", 35: "v1.35.4", 36: "v1.36.3", 37: "v1.37.2"}

# The newest patch release of each minor drawb knows (the k8s.io/dynamic-resource-allocation versions the Go
# module proxy lists, 2026-12-03): a version named without its patch ("1.36") behaves as this one.
NEWEST_PATCHES: dict[int, int] = {34: 13, 35: 10, 36: 6, 37: 2}

# resource.k8s.io versions a default API server serves (pkg/controlplane's stable list) and those it
# has but serves only when --runtime-config turns them on (its beta and alpha lists), the same in
# every known minor.
SERVED: tuple[str, ...] = ("v1",)
AVAILABLE: tuple[str, ...] = ("v1", "v1beta2", "v1beta1", "v1alpha3")

# DRA kinds beyond v1's first five: the resource.k8s.io versions that have each, from the minor they hold
# (pkg/registry/resource/rest/storage_resource.go), the one drawb writes first: for DeviceTaintRule the one
# kube-scheduler and kube-controller-manager read (pkg/scheduler/scheduler.go's TaintInformer). A default
# API server serves only those in SERVED; --runtime-config turns on the others.
KIND_VERSIONS: dict[str, tuple[tuple[int, tuple[str, ...]], ...]] = {
    "DeviceTaintRule": ((34, ("v1alpha3",)), (36, ("v1beta2", "v1alpha3")), (37, ("v1", "v1beta2", "v1alpha3"))),
    "ResourcePoolStatusRequest": ((36, ("v1alpha3",)),),
}

# The gate the components acting on each kind read, from the minor it holds: kube-scheduler (taints of
# DeviceTaintRules on devices) and kube-controller-manager (eviction, the pool status controller).
KIND_GATES: dict[str, tuple[tuple[int, str], ...]] = {
    "DeviceTaintRule": ((34, "DRADeviceTaints"), (35, "DRADeviceTaintRules")),
    "ResourcePoolStatusRequest": ((36, "DRAResourcePoolStatus"),),
}

# Group versions a cluster with a gate on must serve (--runtime-config, as they are off by default), per gate
# and minor: 1.36's API server with GenericWorkload on never becomes ready without scheduling.k8s.io/v1alpha2
# (its admission waits for Workload and PodGroup informers); 1.37's becomes ready without v1beta1.
GATE_APIS: dict[str, dict[int, str]] = {"GenericWorkload": {36: "scheduling.k8s.io/v1alpha2"}}

# Behaviours that a patch release brought, with the first patch of each minor that has each (a minor not
# listed has it in none of its patches); read from k8s.io/dynamic-resource-allocation's structured
# package at each tag (the module versions equal the releases: v0.36.5 is Kubernetes v1.36.5).
PATCH_BEHAVIOURS: dict[str, dict[int, int]] = {
    # The claim limit of 32 devices is checked request by request ("adding 33 devices exceeds the claim limit
    # of 32, with 0 already accounted for"); earlier patches check the claim's sum after its last request
    # ("number of requested devices 33 exceeds the claim limit of 32"). The fix of integer overflow in the
    # limit checks (kubernetes#141307), backported to every minor.
    "alloc.claim_limit_per_request": {34: 12, 35: 9, 36: 5, 37: 1},
    # Counter sets are counted per driver and pool; earlier 1.36 patches count them per pool name, so two
    # drivers' pools of the same name share counters. 1.35 counts them per pool name in every patch.
    "alloc.counters_per_driver_pool": {36: 4, 37: 0},
    # A device of an allocationMode All request knows its pool, so its shared counters can be checked; in
    # earlier patches the allocators that count pools' counters (1.35 incubating and experimental, every 1.36
    # one) dereference a nil pool there: kube-scheduler crashes. 1.34 counts counters per slice.
    "alloc.all_mode_devices_know_their_pool": {34: 0, 35: 6, 36: 2, 37: 0},
}

# Fields a gate guards (gates.py) that the API server drops with the gate off only from the minor of a
# behaviour on (1.34 keeps them whatever the gate says).
FIELD_BEHAVIOURS: dict[str, str] = {
    "constraints[].distinctAttribute": "api.distinct_attribute_gated",
    "requests' tolerations": "api.tolerations_gated",
}

# Behaviours that are not feature gates, with the first minor that has each.
BEHAVIOURS: dict[str, int] = {
    # The API server's CEL compatibility version (one minor back) includes cel-go's ext.Lists
    # (slice, flatten, sort, ...) for new selector expressions.
    "cel.lists_library": 35,
    # The scheduler turns list-valued attributes into CEL lists whatever DRAListTypeAttributes says
    # (1.36 does it only with the gate on).
    "cel.lists_always_converted": 37,
    # A selector's "no such key" runtime error carries the scheduler's hint on `.?` and has().
    "cel.no_such_key_hint": 37,
    # CEL has no duration(int) conversion (cel-go v0.29, which 1.37 takes, dropped int64_to_duration).
    "cel.no_int_to_duration": 37,
    # sharedCounters live in slices of their own, apart from devices (1.34 keeps them per slice).
    "api.counter_sets_in_own_slices": 35,
    # The API server drops distinctAttribute with DRAConsumableCapacity off (1.34 keeps it).
    "api.distinct_attribute_gated": 35,
    # The API server drops requests' tolerations with DRADeviceTaints off (1.34 keeps them).
    "api.tolerations_gated": 35,
    # DeviceTaintRule is served in resource.k8s.io/v1.
    "api.device_taint_rule_v1": 37,
    # matchAttribute over a list-valued attribute holds when the devices share a value, distinctAttribute when
    # they share none (the allocators with ListTypeAttributes; list values need DRAListTypeAttributes on).
    "alloc.list_attribute_constraints": 36,
    # A device taint may have effect None (informational: it blocks and evicts nothing).
    "api.taint_effect_none": 35,
    # The pool status controller counts tainted devices as unavailable and a shared device once.
    "pools.counts_taints": 37,
    # The allocator sorts pools and slices by name before it searches (deterministic order).
    "alloc.deterministic_order": 36,
    # distinctAttribute compares attribute values (1.34 compares the attributes' addresses).
    "alloc.distinct_compares_values": 35,
    # A selector's runtime error names the device it failed on.
    "alloc.errors_name_device": 37,
    # DRAExtendedResource: a DeviceClass's implicit name (deviceclass.resource.kubernetes.io/<class>) counts as
    # an extended resource the scheduler's DRA plugin serves (IsDRAExtendedResourceName; 1.34 leaves a pod asking
    # only for implicit names to NodeResourcesFit alone).
    "extended.implicit_names_served": 35,
    # DRAExtendedResource: the extended resource cache maps every class's implicit name and its
    # extendedResourceName, the class created last winning a shared name (1.34 reads DeviceClassMapping).
    "extended.resource_cache": 35,
    # DRAExtendedResource: a node listing a resource at 0 leaves it to DRA (1.34: only a node not listing it).
    "extended.zero_allocatable_left_to_dra": 35,
    # DRAExtendedResource: the scheduler's claim has one request per container (1.34: one per resource).
    "extended.request_per_container": 35,
    # DRAExtendedResource: the scheduler's claim lists its requests sorted by name.
    "extended.requests_sorted": 36,
    # A claim's owner reference to its pod (from a template, or the scheduler's) no longer blocks the pod's deletion.
    "claims.owner_does_not_block_deletion": 35,
    # The resourceclaim controller looks at the scheduler's extended-resource claim when the pod ends.
    "claims.extended_claim_released": 35,
    # DynamicResources' PostFilter adds no message to the FitError where it deallocates nothing.
    "scheduler.quiet_post_filter": 37,
}
