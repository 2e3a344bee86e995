from tests.core.test_embeddings_openai import *  # noqa
from tests.core.test_embeddings_openai import openai_store as _s  # noqa

def test_probe_nan(tenant_a, openai_store, openai_server):
    openai_server.default = Reply(kind="malformed", body='{"data": [{"index": 0, "embedding": [NaN' + ', 0.1' * 255 + ']}]}')
    r = tenant_a.client("admin").post("/api/v1/stores/remote/memories", {"user_id": "a", "content": "x"}, format="json")
    print(r.status_code, r.json())
    openai_server.default = Reply(kind="malformed", body='{"data": [{"index": 0, "embedding": [' + ', '.join(['0.1']*256) + ']}, {"index": 0, "embedding": [' + ', '.join(['0.2']*256) + ']}]}')
    r = tenant_a.client("admin").post("/api/v1/stores/remote/memories/bulk", {"memories": [{"user_id": "a", "content": "x1"}, {"user_id": "a", "content": "x2"}]}, format="json")
    print(r.status_code, str(r.json())[:200])
