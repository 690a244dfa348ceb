"""Your own load test of the battle endpoint, with Locust (`pip install -e '.[bench]'`).

    locust -f bench/locustfile.py --host http://127.0.0.1:8080 --headless -u 20 -r 10 -t 20s

Each simulated user registers a player, then sends simulate requests for the seeded battle
corpus of `python -m bench` in msgpack (set BENCH_FORMAT=json for JSON). Raise the service's
RATE_LIMIT_PER_SECOND / RATE_LIMIT_BURST first, or the limiter answers 429 to a fast user, and
REGISTRATIONS_PER_ADDRESS_PER_HOUR / _PER_DAY and SIGN_INS_PER_ADDRESS_PER_MINUTE, or it answers
429 to the users that register from the one address past the first few (bench/http.py sets them
all for `python -m bench`).
"""

import itertools
import os
from typing import Any

from locust import FastHttpUser, between, task

from bench.load import JSON, MSGPACK, simulate_bodies

FORMAT = os.environ.get("BENCH_FORMAT", "msgpack")
BODIES = simulate_bodies(FORMAT, 1000)


class BattlePlayer(FastHttpUser):
    wait_time = between(0.0, 0.05)

    def on_start(self) -> None:
        answer = self.client.post("/v1/players", json={"name": "locust"})
        media = MSGPACK if FORMAT == "msgpack" else JSON
        self.headers = {
            "Authorization": f"Bearer {answer.json()['token']}",
            "Content-Type": media,
            "Accept": media,
        }
        # Users start at different battles of the corpus, then go round it.
        self.bodies = itertools.islice(itertools.cycle(BODIES), id(self) % len(BODIES), None)

    @task
    def simulate(self) -> None:
        body: Any = next(self.bodies)
        self.client.post("/v1/battles/simulate", data=body, headers=self.headers)
