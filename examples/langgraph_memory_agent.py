"""A LangGraph agent with memoryhub as its long-term store (``MemoryHubLangGraphStore``).

Start memoryhub (`make run`), then in another shell:

    source var/demo.env        # MEMORYHUB_URL, MEMORYHUB_API_KEY
    .venv/bin/python examples/langgraph_memory_agent.py --store demo --user alice

The graph is recall → respond → remember. `recall` searches the store (memoryhub's hybrid search, scoped to
the user) with the user's message; `respond` calls the model with what was recalled; `remember` stores the
facts the model asked to keep (a `remember` tool call) with `store.put`.

Run 1: the user states a habit; the model asks to remember it and the graph stores it in the namespace
(user, "memories"). Run 2, a new store and graph (as a new process would have): the user asks about it and
`recall` finds the fact for the model. The model is scripted (langchain_core's GenericFakeChatModel): no
network, no API key; put a real chat model in its place for a real agent.
"""

import argparse
import sys
import uuid
from typing import TypedDict

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from memoryhub_client.langgraph import MemoryHubLangGraphStore


class State(TypedDict, total=False):
    user_id: str
    message: str
    recalled: list[str]
    reply: AIMessage


def build_graph(store: MemoryHubLangGraphStore, model):
    def recall(state: State, runtime: Runtime) -> dict:
        items = runtime.store.search((state["user_id"], "memories"), query=state["message"], limit=3)
        for item in items:
            print(f"  recalled (score {item.score:.4f}): {item.value['content']}")
        return {"recalled": [item.value["content"] for item in items]}

    def respond(state: State) -> dict:
        known = "\n".join(f"- {fact}" for fact in state["recalled"]) or "(nothing yet)"
        system = f"You are a helpful assistant. What you know about the user:\n{known}"
        print(f"  the model is given: {system!r}")
        return {"reply": model.invoke([SystemMessage(system), HumanMessage(state["message"])])}

    def remember(state: State) -> dict:
        store = get_store()
        for call in state["reply"].tool_calls:
            if call["name"] == "remember":
                key = uuid.uuid4().hex
                store.put((state["user_id"], "memories"), key, {"content": call["args"]["fact"]})
                print(f"  stored {state['user_id']}/memories/{key}: {call['args']['fact']!r}")
        return {}

    builder = StateGraph(State)
    builder.add_node("recall", recall)
    builder.add_node("respond", respond)
    builder.add_node("remember", remember)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "respond")
    builder.add_edge("respond", "remember")
    builder.add_edge("remember", END)
    return builder.compile(store=store)


def run(store: MemoryHubLangGraphStore, user: str, message: str, replies: list[AIMessage]) -> State:
    print(f"user> {message}")
    result = build_graph(store, GenericFakeChatModel(messages=iter(replies))).invoke(
        {"user_id": user, "message": message})
    reply = result["reply"]
    print(f"model> {reply.content or ', '.join(call['name'] for call in reply.tool_calls)}")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", default="demo", help="memoryhub store (make run creates 'demo')")
    parser.add_argument("--user", default=f"user-{uuid.uuid4().hex[:6]}", help="the user's memoryhub user_id")
    parser.add_argument("--spool", default=None, help="a file where puts wait while memoryhub is unavailable")
    args = parser.parse_args()

    # --- Run 1: the user tells the agent a habit; the model asks to remember it.
    print("--- run 1")
    store = MemoryHubLangGraphStore(store=args.store, spool=args.spool)  # MEMORYHUB_URL, MEMORYHUB_API_KEY
    fact = "The user drinks green tea every morning"
    run(store, args.user, "I drink green tea every morning.", [
        AIMessage(content="", tool_calls=[{"name": "remember", "args": {"fact": fact}, "id": "call-1"}]),
    ])
    delivered = store.flush(timeout=10)  # puts go through an outbox: make sure memoryhub has it before exiting
    print(f"memoryhub has the put: {delivered}")
    store.close()

    # --- Run 2: a new store and graph, the same user.
    print("--- run 2")
    store = MemoryHubLangGraphStore(store=args.store, spool=args.spool)
    result = run(store, args.user, "What do I usually drink in the morning?", [
        AIMessage(content="You usually drink green tea in the morning."),
    ])
    print(f"recalled in run 2: {result['recalled']}")
    store.close()
    return 0 if fact in result["recalled"] else 1


if __name__ == "__main__":
    sys.exit(main())
