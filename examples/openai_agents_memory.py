"""An OpenAI Agents SDK agent whose conversation history is a memoryhub session.

Start memoryhub (`make run`), then in another shell:

    source var/demo.env
    .venv/bin/python examples/openai_agents_memory.py                  # scripted model, no network
    .venv/bin/python examples/openai_agents_memory.py --model openai   # OPENAI_API_KEY (and OPENAI_MODEL)

Two runs of one agent on one MemoryHubSession: in the first the customer mentions an allergy; the second is
given the first from memoryhub (the SDK's session history) and answers with it. memoryhub also extracts the
allergy into the customer's long-term memory, which outlives this session.

The agent keeps running if memoryhub is down (the session answers from what it knows), and the items wait
in a local spool (var/openai-agents-example.spool) until memoryhub has them, even across a restart.
"""

import argparse
import asyncio
import sys
import uuid

from agents import Agent, RunConfig, Runner
from agents.testing import ModelStep, ScriptedModel, assistant_message

from memoryhub_client import MemoryHub
from memoryhub_client.openai_agents import MemoryHubSession

INSTRUCTIONS = "You are the concierge of Acme Clinic's online shop. Use what the customer told you earlier."


def scripted_model() -> ScriptedModel:
    def second_answer(call) -> list:
        # The scripted model answers from the history the session gave it, as a real model would.
        said = " ".join(str(item.get("content")) for item in call.input if item.get("role") == "user")
        if "latex" in said:
            return [assistant_message("Nitrile gloves, since you're allergic to latex.", item_id="msg_2")]
        return [assistant_message("Any gloves you like.", item_id="msg_2")]

    return ScriptedModel([
        [assistant_message("Thanks, I've noted that you're allergic to latex.", item_id="msg_1")],
        ModelStep.respond(second_answer),
    ])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=["scripted", "openai"], default="scripted")
    parser.add_argument("--store", default="demo", help="memoryhub store (make run creates 'demo')")
    parser.add_argument("--user", default=f"customer-{uuid.uuid4().hex[:6]}", help="the customer's user_id")
    parser.add_argument("--spool", default="var/openai-agents-example.spool",
                        help="where items wait while memoryhub is unavailable ('' for process memory only)")
    args = parser.parse_args()

    model = scripted_model() if args.model == "scripted" else None  # None: the SDK's default OpenAI model
    agent = Agent(name="concierge", instructions=INSTRUCTIONS, **({"model": model} if model else {}))
    # Offline, nothing to send traces to; with OpenAI the SDK's tracing stays on.
    run_config = RunConfig(tracing_disabled=args.model == "scripted")
    # The session makes its own client (MEMORYHUB_URL and MEMORYHUB_API_KEY) with the short timeouts an
    # agent's path needs; this one, for reading results back, may wait longer.
    hub = MemoryHub()
    session = MemoryHubSession(f"concierge-{uuid.uuid4().hex[:8]}", store=args.store, user_id=args.user,
                               agent_id="concierge", spool=args.spool or None)

    for text in ("Hi! Please remember that I'm allergic to latex.", "Which gloves should I order?"):
        result = Runner.run_sync(agent, text, session=session, run_config=run_config)
        print(f"customer> {text}\nagent> {result.final_output}")

    if model is not None:
        print("\nwhat the model was given on the second run:")
        for item in model.calls[1].input:
            print(f"  - {item.get('role', item.get('type'))}: {text_of(item)}")
    items = asyncio.run(session.get_items())
    print(f"\nmemoryhub session {session.session_id!r} holds {len(items)} items")

    session.flush(timeout=30)  # the items are on the server (they were, unless memoryhub was slow)
    flushed = hub.sessions.flush(args.store, session.session_id, wait=30)
    print(f"memoryhub extracted the conversation (complete: {flushed.complete}):")
    for memory in hub.memories.list(args.store, user_id=args.user).items:
        print(f"  - [{memory.memory_type}] {memory.content}")
    session.close()
    hub.close()
    return 0


def text_of(item: dict) -> str:
    content = item.get("content")
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


if __name__ == "__main__":
    sys.exit(main())
