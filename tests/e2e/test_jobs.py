"""Jobs on a real cluster (scheduler + simulated kubelets + job controller): parallel
completions, BackoffLimitExceeded, ttlSecondsAfterFinished. Pods run for
`sim.minik3s.io/run-seconds` and exit with `sim.minik3s.io/exit-code`."""

from __future__ import annotations

from typing import Any

from minik3s.testing.wait import wait_for


def job(name: str, *, run_seconds: int = 1, exit_code: int = 0, **spec: Any) -> dict:
    template = {
        "metadata": {
            "annotations": {
                "sim.minik3s.io/run-seconds": str(run_seconds),
                "sim.minik3s.io/exit-code": str(exit_code),
            }
        },
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "work",
                    "image": "busybox:1.36",
                    "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}},
                }
            ],
        },
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"template": template, **spec},
    }


def get_job(http, ns: str, name: str) -> dict:
    r = http.get(f"/apis/batch/v1/namespaces/{ns}/jobs/{name}")
    r.raise_for_status()
    return r.json()


def condition(j: dict, cond_type: str) -> dict | None:
    for c in (j.get("status") or {}).get("conditions") or []:
        if c["type"] == cond_type and c["status"] == "True":
            return c
    return None


def job_events(http, ns: str, name: str) -> list[tuple[str, str]]:
    evs = http.get(f"/api/v1/namespaces/{ns}/events").json()["items"]
    return [
        (e["reason"], e["message"])
        for e in evs
        if e["involvedObject"].get("kind") == "Job" and e["involvedObject"]["name"] == name
    ]


def test_three_completions_two_at_a_time_complete(http, ns):
    r = http.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=job("calc", completions=3, parallelism=2))
    assert r.status_code == 201, r.text
    seen_active: list[int] = []

    def complete():
        j = get_job(http, ns, "calc")
        seen_active.append((j.get("status") or {}).get("active", 0))
        return j if condition(j, "Complete") else None

    j = wait_for(complete)
    st = j["status"]
    assert st["succeeded"] == 3 and st.get("failed", 0) == 0 and st["active"] == 0
    assert st["startTime"] and st["completionTime"]
    assert [c["type"] for c in st["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert st["conditions"][1]["reason"] == "CompletionsReached"
    assert max(seen_active) <= 2
    pods = http.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": "job-name=calc"}).json()[
        "items"
    ]
    assert len(pods) == 3
    assert all(p["status"]["phase"] == "Succeeded" for p in pods)
    assert all(
        "batch.kubernetes.io/job-tracking" not in (p["metadata"].get("finalizers") or []) for p in pods
    )
    assert wait_for(lambda: ("Completed", "Job completed") in job_events(http, ns, "calc"), timeout=20)


def test_failing_pods_exceed_backoff_limit(http, ns):
    r = http.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=job("boom", exit_code=1, backoffLimit=1))
    assert r.status_code == 201, r.text
    # the replacement pod waits out the 10 s pod-failure backoff
    j = wait_for(
        lambda: (lambda j: j if condition(j, "Failed") else None)(get_job(http, ns, "boom")), timeout=120
    )
    st = j["status"]
    assert st["failed"] == 2 and st.get("succeeded", 0) == 0 and st["active"] == 0
    failed = condition(j, "Failed")
    assert failed is not None
    assert (failed["reason"], failed["message"]) == (
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    )
    assert condition(j, "FailureTarget") is not None
    assert wait_for(
        lambda: (
            ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
            in job_events(http, ns, "boom")
        ),
        timeout=20,
    )


def test_finished_job_is_deleted_after_its_ttl(http, ns):
    r = http.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=job("brief", ttlSecondsAfterFinished=1))
    assert r.status_code == 201, r.text

    def gone():
        return http.get(f"/apis/batch/v1/namespaces/{ns}/jobs/brief").status_code == 404

    wait_for(gone)
    wait_for(
        lambda: (
            not http.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": "job-name=brief"}).json()[
                "items"
            ]
        )
    )


def test_indexed_job_runs_every_index_once_and_lists_them(http, ns):
    r = http.post(f"/apis/batch/v1/namespaces/{ns}/jobs",
                  json=job("shards", completions=4, parallelism=2, completionMode="Indexed"))
    assert r.status_code == 201, r.text
    j = wait_for(lambda: (lambda j: j if condition(j, "Complete") else None)(get_job(http, ns, "shards")))
    st = j["status"]
    assert (st["completedIndexes"], st["succeeded"], st["active"]) == ("0-3", 4, 0)
    pods = http.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": "job-name=shards"}).json()["items"]
    by_index = {p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"]: p for p in pods}
    assert sorted(by_index) == ["0", "1", "2", "3"] and len(pods) == 4
    for ix, p in by_index.items():
        assert p["metadata"]["name"].startswith(f"shards-{ix}-")
        assert p["spec"]["hostname"] == f"shards-{ix}"
        assert p["status"]["phase"] == "Succeeded"


def test_job_validation_is_upstreams(http, ns):
    body = job("bad", completionMode="Indexed")
    body["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    body["spec"].pop("completions", None)
    body["spec"]["parallelism"] = 2
    r = http.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=body)
    assert r.status_code == 422
    causes = {c["field"]: c["message"] for c in r.json()["details"]["causes"]}
    assert causes == {
        "spec.completions": "Required value: when completion mode is Indexed",
        "spec.template.spec.restartPolicy": 'Required value: valid values: "OnFailure", "Never"',
    }


def test_pod_failure_policy_fails_the_job_on_its_exit_code_at_once(http, ns):
    body = job("exit3", exit_code=3, backoffLimit=6, podFailurePolicy={"rules": [
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [3]}}]})
    r = http.post(f"/apis/batch/v1/namespaces/{ns}/jobs", json=body)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["podReplacementPolicy"] == "Failed"
    j = wait_for(lambda: (lambda j: j if condition(j, "Failed") else None)(get_job(http, ns, "exit3")), timeout=30)
    failed = condition(j, "Failed")
    assert failed is not None and failed["reason"] == "PodFailurePolicy"
    assert failed["message"].startswith("Container work for pod ") and failed["message"].endswith(
        "failed with exit code 3 matching FailJob rule at index 0")
    assert j["status"]["failed"] == 1
