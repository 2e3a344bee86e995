"""A Strands support agent with memoryhub as its long-term memory.

Start memoryhub (`make run`), then in another shell:

    source var/demo.env
    .venv/bin/python examples/strands_support_agent.py                      # scripted model, no network
    .venv/bin/python examples/strands_support_agent.py --model openai       # OPENAI_API_KEY, optional OPENAI_BASE_URL
    .venv/bin/python examples/strands_support_agent.py --model anthropic    # ANTHROPIC_API_KEY

First conversation: the customer introduces herself and states a preference; memoryhub extracts the
facts on the server. Second conversation, a new agent for the same customer: the facts are injected
into the model's input (a <memory> block) and available through the search_memory tool.

The agents keep running if memoryhub is down (they answer without memory), and the messages wait in a
local spool (var/strands-example.spool) until memoryhub has them, even across a restart of this script.
(The openai and anthropic models need `pip install "strands-agents[openai]"` / `[anthropic]`.)
"""

import argparse
import json
import os
import sys
import uuid

from strands import Agent
from strands.memory import MemoryManager

from memoryhub_client import MemoryHub
from memoryhub_client.strands import MemoryHubStore
from memoryhub_client.testing import ScriptedModel, ToolCall

SYSTEM_PROMPT = "You are a friendly support agent for Acme Displays. Use what you remember about the customer."


def build_model(kind: str, script: list):
    if kind == "scripted":
        return ScriptedModel(script)
    if kind == "openai":
        from strands.models.openai import OpenAIModel

        client_args = {"api_key": os.environ["OPENAI_API_KEY"]}
        if os.environ.get("OPENAI_BASE_URL"):
            client_args["base_url"] = os.environ["OPENAI_BASE_URL"]
        return OpenAIModel(client_args=client_args, model_id=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
    if kind == "anthropic":
        from strands.models.anthropic import AnthropicModel

        return AnthropicModel(model_id=os.environ.get("ANTHROPIC_MODEL", "claude-haiku-4-5"), max_tokens=1024)
    raise SystemExit(f"unknown model {kind!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=["scripted", "openai", "anthropic"], default="scripted")
    parser.add_argument("--store", default="demo", help="memoryhub store (make run creates 'demo')")
    parser.add_argument("--user", default=f"customer-{uuid.uuid4().hex[:6]}", help="the customer's user_id")
    parser.add_argument("--spool", default="var/strands-example.spool",
                        help="where messages wait while memoryhub is unavailable ('' for process memory only)")
    args = parser.parse_args()
    spool = args.spool or None

    # The stores make their own clients (MEMORYHUB_URL and MEMORYHUB_API_KEY, e.g. from var/demo.env), with
    # the short timeouts an agent's path needs; this one, for reading results back, may wait longer.
    hub = MemoryHub()

    # --- Conversation 1: the customer tells the agent about herself.
    first = MemoryHubStore(store=args.store, user_id=args.user, agent_id="support-agent", spool=spool)
    agent = Agent(
        model=build_model(args.model, ["Nice to meet you, Alice!", "Got it, dark mode.", "You're welcome!"]),
        system_prompt=SYSTEM_PROMPT,
        memory_manager=MemoryManager(stores=[first]),
        callback_handler=None,
    )
    for text in ("Hi, my name is Alice.", "I prefer dark mode on every screen.", "Thanks, that's all."):
        print(f"customer> {text}\nagent> {agent(text)}")

    first.flush(timeout=30)  # the messages are on the server (they were, unless memoryhub was slow)
    flushed = hub.sessions.flush(args.store, first.session_id, wait=30)
    print(f"\nmemoryhub extracted the conversation (complete: {flushed.complete}):")
    for memory in hub.memories.list(args.store, user_id=args.user).items:
        print(f"  - [{memory.memory_type}] {memory.content}")

    # --- Conversation 2: a new agent, same customer.
    second = MemoryHubStore(store=args.store, user_id=args.user, agent_id="support-agent", spool=spool)
    model = build_model(args.model, [ToolCall("search_memory", {"query": "display preferences"}),
                                     "You like dark mode, Alice, so I've switched it on for you."])
    agent = Agent(model=model, system_prompt=SYSTEM_PROMPT, memory_manager=MemoryManager(stores=[second]),
                  callback_handler=None)
    question = "Can you set up my new monitor the way I like it?"
    print(f"\ncustomer> {question}\nagent> {agent(question)}")
    if args.model == "scripted":
        injected = [text for text in model.texts_sent(0) if "<memory>" in text]
        print("\nwhat the model was given before answering:", *injected, sep="\n")
        print("search_memory returned:", json.dumps(model.texts_sent(1)[-1])[:300])
    hub.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
