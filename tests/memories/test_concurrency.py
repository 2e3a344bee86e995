import threading

import pytest
from django.db import connection

from apps.core.actors import Actor
from apps.memories.models import Memory, MemoryRevision
from apps.memories.services import MemoryInput, memory_create


@pytest.mark.django_db(transaction=True)
def test_concurrent_writes_of_the_same_content_keep_one_row(tenant_a):
    barrier = threading.Barrier(8)
    results, errors = [], []

    def write(index):
        try:
            barrier.wait()
            item = MemoryInput(user_id="alice", content="Alice   likes green tea" + "." * (index % 2))
            results.append(memory_create(store=tenant_a.store, item=item, actor=Actor.system()))
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert Memory.objects.filter(store=tenant_a.store).count() == 1
    assert len({result.memory.pk for result in results}) == 1
    assert sum(not result.duplicate for result in results) == 1
    assert MemoryRevision.objects.filter(store=tenant_a.store).count() == 1
