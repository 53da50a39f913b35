"""Leader election on a Lease (client-go's tryAcquireOrRenew) against the real in-process API on
a fake clock: what `kubectl get lease -n kube-system kube-scheduler -o yaml` shows, and what a
second scheduler with the same Lease does."""

from __future__ import annotations

import asyncio

import pytest

from minik3s.api.resources import LEASES
from minik3s.client.leaderelection import LeaderElectionConfig, LeaseElector
from minik3s.controllers.apiserver_identity import ApiserverIdentity, apiserver_id

CFG = LeaderElectionConfig(resource_name="kube-scheduler")


def lease(real_api, name="kube-scheduler"):
    return real_api.obj(LEASES, name, "kube-system")


async def until(cond, timeout=10.0):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not cond():
        assert loop.time() < deadline, "condition not met"
        await asyncio.sleep(0.005)


async def test_first_acquisition_creates_the_lease_as_client_go_writes_it(real_api, clock):
    a = LeaseElector(real_api, CFG, identity="host_a", clock=clock)
    assert await a.try_acquire_or_renew()
    spec = lease(real_api)["spec"]
    assert spec["holderIdentity"] == "host_a"
    assert spec["leaseDurationSeconds"] == 15
    assert spec["leaseTransitions"] == 0
    # MicroTime: six fractional digits, UTC
    assert len(spec["renewTime"].split(".")[1]) == len("123456Z")
    acquired = spec["acquireTime"]
    clock.advance(2)
    assert await a.try_acquire_or_renew()
    spec = lease(real_api)["spec"]
    assert spec["acquireTime"] == acquired  # kept while the same holder renews
    assert spec["renewTime"] > acquired
    assert spec["leaseTransitions"] == 0


async def test_a_second_candidate_waits_for_expiry_then_takes_over_counting_a_transition(real_api, clock):
    a = LeaseElector(real_api, CFG, identity="host_a", clock=clock)
    b = LeaseElector(real_api, CFG, identity="host_b", clock=clock)
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()
    clock.advance(10)
    assert await a.try_acquire_or_renew()  # a renews: b sees the record change and waits again
    clock.advance(10)
    assert not await b.try_acquire_or_renew()
    clock.advance(16)  # a stopped renewing 26 s ago, b saw the change 16 s ago: expired
    assert await b.try_acquire_or_renew()
    spec = lease(real_api)["spec"]
    assert spec["holderIdentity"] == "host_b"
    assert spec["leaseTransitions"] == 1
    assert not await a.try_acquire_or_renew()  # a now waits for b


async def test_release_lets_a_successor_in_at_once(real_api, clock):
    a = LeaseElector(real_api, CFG, identity="host_a", clock=clock)
    b = LeaseElector(real_api, CFG, identity="host_b", clock=clock)
    await a.acquire()
    await a.release()
    spec = lease(real_api)["spec"]
    assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1
    assert await b.try_acquire_or_renew()
    assert lease(real_api)["spec"]["leaseTransitions"] == 1


async def test_force_takes_an_earlier_runs_lease_without_waiting(real_api, clock):
    old = LeaseElector(real_api, CFG, identity="host_old", clock=clock)
    assert await old.try_acquire_or_renew()
    new = LeaseElector(real_api, CFG, identity="host_new", clock=clock, force=True)
    assert await new.try_acquire_or_renew()
    assert lease(real_api)["spec"]["holderIdentity"] == "host_new"
    # only the first round is forced: the old run renewing again would now be refused
    assert not await old.try_acquire_or_renew()


async def test_hold_renews_every_retry_period_and_releases_on_cancel(real_api, clock):
    a = LeaseElector(real_api, CFG, identity="host_a", clock=clock)
    task = real_api.spawn(a.hold(), "elector")
    await until(lambda: lease(real_api) is not None and clock.sleepers > 0)
    first = lease(real_api)["spec"]["renewTime"]
    clock.advance(2)
    await until(lambda: lease(real_api)["spec"]["renewTime"] != first)
    await real_api.stop(task)
    assert lease(real_api)["spec"]["holderIdentity"] == ""


async def test_leadership_lost_when_renewal_fails_past_the_deadline(real_api, clock):
    a = LeaseElector(real_api, CFG, identity="host_a", clock=clock)
    await a.acquire()
    # another holder takes the Lease (e.g. an operator's edit): a's renewals are refused
    obj = lease(real_api)
    obj["spec"]["holderIdentity"] = "intruder"
    await real_api.update(LEASES, obj)
    renewing = asyncio.ensure_future(a.renew())
    for _ in range(6):
        await until(lambda: clock.sleepers > 0 or renewing.done())
        clock.advance(2)
    await asyncio.wait_for(renewing, 5)
    assert not a.leading


def test_identity_lease_name_is_upstreams_hash_of_the_hostname():
    # figures computed from upstream's formula (sha256 of the uint16-length-prefixed parts)
    assert apiserver_id("kind-control-plane") == "apiserver-c7uylvfxlbqccnk6myfkwetzze"
    assert apiserver_id("control-plane") == "apiserver-6vzvajxlkf7lcarzgdc4jnyaru"


async def test_identity_lease_is_created_labelled_renewed_and_expired_ones_collected(real_api, clock):
    ident = ApiserverIdentity(real_api, clock=clock, hostname="node-a")
    await ident.renew()
    obj = lease(real_api, ident.name)
    assert obj["metadata"]["labels"] == {"apiserver.kubernetes.io/identity": "kube-apiserver",
                                         "kubernetes.io/hostname": "node-a"}
    holder = obj["spec"]["holderIdentity"]
    assert holder.startswith(ident.name + "_")
    assert obj["spec"]["leaseDurationSeconds"] == 3600
    assert "acquireTime" not in obj["spec"] and "leaseTransitions" not in obj["spec"]
    clock.advance(10)
    await ApiserverIdentity(real_api, clock=clock, hostname="node-a").renew()  # a restart
    again = lease(real_api, ident.name)
    assert again["spec"]["holderIdentity"] == holder  # only renewTime moves
    assert again["spec"]["renewTime"] > obj["spec"]["renewTime"]
    other = ApiserverIdentity(real_api, clock=clock, hostname="node-b")
    await other.renew()
    clock.advance(3000)
    await ident.renew()
    clock.advance(700)  # node-b's lease is 3,700 s old, node-a's 700 s
    assert await ident.collect_expired() == [other.name]
    assert lease(real_api, other.name) is None and lease(real_api, ident.name) is not None


@pytest.mark.parametrize("stanza, message", [
    ({"leaseDuration": "10s"}, "leaderElection.leaseDuration: Invalid value: '10s': "
                               "LeaseDuration must be greater than RenewDeadline"),
    ({"retryPeriod": "0s"}, "leaderElection.retryPeriod: Invalid value: '0s': must be greater than zero"),
    ({"resourceName": ""}, 'leaderElection.resourceName: Invalid value: "": resourceName is required'),
    ({"resourceLock": "endpoints"}, "Invalid lock-type endpoints"),
])
def test_scheduler_configuration_validates_leader_election(stanza, message):
    from scheduler.config import ConfigError, parse_config

    with pytest.raises(ConfigError) as e:
        parse_config({"leaderElection": stanza})
    assert message in str(e.value)


def test_scheduler_configuration_leader_election_defaults_and_durations():
    from scheduler.config import parse_config

    cfg = parse_config({"leaderElection": {"leaseDuration": "1m30s", "resourceName": "my-scheduler"}})
    le = cfg.leader_election.election()
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (90.0, 10.0, 2.0)
    assert le.resource_name == "my-scheduler" and le.resource_namespace == "kube-system"
    assert not parse_config({"leaderElection": {"leaderElect": False, "leaseDuration": "1s"}}
                            ).leader_election.election().leader_elect
