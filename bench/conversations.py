"""Synthetic customer-support conversations for the extraction benchmark, in 10-message batches.

A batch is five user turns, each followed by the agent's answer. The user opens with a problem about an
order, then mixes plain facts about themselves (name, city, contact preference, job), follow-up questions
and small talk, so that about half the user turns carry something the rules extractor keeps. Everything
derives from a seeded `random.Random`, so the same (seed, user, session, batch) gives the same text.
`SessionStream` and `post_batch` turn them into `POST .../sessions/{id}/messages` requests.
"""

import random
from dataclasses import dataclass

from corpus import CITIES, FIRST_NAMES, JOBS, WEEKDAYS

AGENT_ID = "support-bot"

PRODUCTS = (
    "wireless headphones;standing desk;coffee grinder;running shoes;e-reader;air purifier;office chair;"
    "blender;backpack;smart watch;desk lamp;rain jacket;robot vacuum;espresso machine;mechanical keyboard"
).split(";")
PREFERENCES = (
    "email over phone calls;dark mode;text messages for delivery updates;paper invoices;weekend deliveries;"
    "eco-friendly packaging;morning delivery slots;English for support chats;the express courier;store credit"
).split(";")
CARRIERS = "DHL;UPS;FedEx;the local courier;our own delivery team".split(";")

OPENERS = (
    "Hi, my order number is {order} and it still hasn't arrived. It was supposed to come on {weekday}.",
    "Hello. My order number is {order}; the {product} arrived with a cracked case.",
    "Hi there, I was charged twice for order {order}. Can you look into it?",
    "Good morning! My order number is {order} and the tracking page has not changed for four days.",
    "Hey, the {product} from order {order} stopped working after two days.",
)
FOLLOW_UPS = (
    "Any news about order {order}? I still have nothing.",
    "I'm writing again about my {product}; the replacement has not shipped yet.",
    "Quick follow-up on order {order}: the refund is not on my statement yet.",
)
FACTS = (
    "My name is {name}.",
    "I live in {city}, so the depot there should be closest.",
    "I prefer {preference}.",
    "I work as a {job}, so I'm not home during the day.",
    "By the way, I moved to {city} last month.",
)
SMALL_TALK = (
    "Can you check where it is right now?",
    "How long will the refund take?",
    "Okay, that makes sense.",
    "Is there anything else you need from me?",
    "Could you send me the tracking link again?",
    "Thanks, that's really helpful!",
    "Will I get an email when it ships?",
    "Great, thank you so much for your help.",
    "Do I need to send the old one back first?",
    "Sorry, one more question: can I change the delivery address?",
)
ANSWERS = (
    "I'm sorry to hear that. Let me look up order {order} for you.",
    "Thanks for waiting. The parcel is at our {city} depot and {carrier} should deliver it within two working days.",
    "I've issued a refund of {amount} to your original payment method; it usually shows up in 3 to 5 business days.",
    "I've arranged a free replacement {product}; you'll get a confirmation email with the new tracking number.",
    "Understood, I've added a note to your account.",
    "You don't need to send anything back; we'll collect the faulty {product} when the replacement arrives.",
    "Yes, you'll get an email and a text message as soon as it leaves the warehouse.",
    "Of course. The tracking link is in the confirmation email, and I've just sent it again.",
    "Is there anything else I can help you with today?",
    "You're welcome! Have a great day.",
)


@dataclass(frozen=True)
class Turn:
    role: str
    text: str


def order_number(rng: random.Random) -> str:
    letters = "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(2))
    return f"{letters}-{rng.randrange(10_000, 100_000)}"


class SupportConversations:
    def __init__(self, seed: int):
        self.seed = seed

    def user_id(self, user: int) -> str:
        return f"customer-{user:05d}"

    def batch(self, *, user: int, session: str, index: int) -> list[Turn]:
        """Batch `index` (0 = the session's first) of a session of `user`: user, agent, user, agent, ..."""
        profile = random.Random(f"{self.seed}:profile:{user}")
        name, home = profile.choice(FIRST_NAMES), profile.choice(CITIES)
        rng = random.Random(f"{self.seed}:{user}:{session}:{index}")
        values = {
            "name": name,
            "city": home if rng.random() < 0.8 else rng.choice(CITIES),
            "order": order_number(random.Random(f"{self.seed}:{user}:{session}:order")),
            "product": rng.choice(PRODUCTS),
            "preference": rng.choice(PREFERENCES),
            "job": profile.choice(JOBS),
            "weekday": rng.choice(WEEKDAYS),
            "carrier": rng.choice(CARRIERS),
            "amount": f"€{rng.randrange(9, 400)}.{rng.randrange(100):02d}",
        }
        facts, small_talk = rng.sample(FACTS, len(FACTS)), rng.sample(SMALL_TALK, len(SMALL_TALK))
        turns = []
        for position in range(5):
            if position == 0:
                template = rng.choice(OPENERS if index == 0 else FOLLOW_UPS)
            elif rng.random() < 0.4:
                template = facts.pop()
            else:
                template = small_talk.pop()
            turns.append(Turn("user", template.format(**values)))
            answer = ANSWERS[0] if position == 0 and index == 0 else rng.choice(ANSWERS[1:])
            turns.append(Turn("assistant", answer.format(**values)))
        return turns


# --- As requests ------------------------------------------------------------------------------------


def messages_path(store: str, session: str) -> str:
    return f"/api/v1/stores/{store}/sessions/{session}/messages"


class SessionStream:
    """One load thread's conversations: a new session every `batches_per_session` batches, (run_id, seq) set."""

    def __init__(self, conversations, *, store: str, prefix: str, users: int, batches_per_session: int, seed: str):
        self.conversations = conversations
        self.store = store
        self.prefix = prefix
        self.users = users
        self.batches_per_session = batches_per_session
        self.rng = random.Random(seed)
        self.sessions = 0
        self.session = ""
        self.user = 0
        self.batch_index = batches_per_session  # the first call starts a session

    def next_request(self) -> tuple[str, dict]:
        if self.batch_index >= self.batches_per_session:
            self.sessions += 1
            self.session = f"{self.prefix}-{self.sessions:05d}"
            self.user = self.rng.randrange(self.users)
            self.batch_index = 0
        turns = self.conversations.batch(user=self.user, session=self.session, index=self.batch_index)
        first_seq = self.batch_index * len(turns)
        body = {
            "user_id": self.conversations.user_id(self.user),
            "agent_id": AGENT_ID,
            "run_id": f"run-{self.session}",
            "messages": [
                {"role": turn.role, "content": turn.text, "seq": first_seq + offset}
                for offset, turn in enumerate(turns)
            ],
        }
        self.batch_index += 1
        return messages_path(self.store, self.session), body


def post_batch(client, stream: SessionStream):
    """One ingest request; Outcome.items is 1 when it created an extraction job."""
    from load import Outcome, timed_post

    path, body = stream.next_request()
    latency_ms, response, error = timed_post(client, path, body, expect_status=202)
    if error:
        return Outcome(latency_ms, ok=False, error=error)
    answer = response.json()
    if answer.get("accepted") != len(body["messages"]) or answer.get("duplicates"):
        error = f"accepted {answer.get('accepted')}, duplicates {answer.get('duplicates')} of {len(body['messages'])}"
        return Outcome(latency_ms, ok=False, error=error)
    return Outcome(latency_ms, ok=True, items=1 if answer.get("extraction_job") else 0)
