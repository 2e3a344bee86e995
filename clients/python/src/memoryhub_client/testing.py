"""Offline testing aids for agents that use memoryhub (needs the `strands` extra).

``ScriptedModel`` is a Strands model that replays a script instead of calling an LLM and records
what the agent sent it, so an agent's use of memory can be tested without a network.
"""

import json

from strands.models.model import Model


class ToolCall:
    """A scripted reply that calls a tool."""

    def __init__(self, name: str, arguments: dict):
        self.name, self.arguments = name, arguments


class ScriptedModel(Model):
    """Answers each model call with the next scripted reply: a text, or a ToolCall."""

    def __init__(self, replies: list):
        self.replies = list(replies)
        self.calls: list[dict] = []

    def update_config(self, **model_config):
        pass

    def get_config(self):
        return {}

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):
        raise NotImplementedError("not used by these tests")
        yield  # an async generator, as the interface requires

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        # A JSON copy: the agent goes on mutating its message list after the call.
        self.calls.append({
            "messages": json.loads(json.dumps(messages, default=str)),
            "tools": [spec["name"] for spec in tool_specs or []],
        })
        reply = self.replies.pop(0) if self.replies else "OK."
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(reply, ToolCall):
            tool_use_id = f"tool-{len(self.calls)}"
            yield {"contentBlockStart": {"start": {"toolUse": {"name": reply.name, "toolUseId": tool_use_id}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(reply.arguments)}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            return
        yield {"contentBlockStart": {"start": {}}}
        yield {"contentBlockDelta": {"delta": {"text": reply}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}

    def texts_sent(self, call: int) -> list[str]:
        """Every text the model received in one call: message text blocks and tool-result texts."""
        texts = []
        for message in self.calls[call]["messages"]:
            for block in message["content"]:
                if "text" in block:
                    texts.append(block["text"])
                for inner in (block.get("toolResult") or {}).get("content", []):
                    if "text" in inner:
                        texts.append(inner["text"])
                    if "json" in inner:
                        texts.append(json.dumps(inner["json"]))
        return texts
