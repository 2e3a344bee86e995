"""memoryhub settings: every value comes from an environment variable (README lists them all)."""

from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from memoryhub.env import env_bool, env_float, env_int, env_list, env_str
from memoryhub.logging import LOG_FORMATS, logging_config

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", True)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG=false")
    SECRET_KEY = "django-insecure-development-only-key-do-not-use-in-production"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

DATA_DIR = Path(env_str("MEMORYHUB_DATA_DIR", str(BASE_DIR / "var"))).resolve()

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_q",
    "channels",
    "channels_postgres",
    "axes",
    "apps.core",
    "apps.tenancy",
    "apps.memories",
    "apps.conversations",
    "apps.extraction",
    "apps.portability",
    "apps.review",
    "apps.mcp_server",
]

MIDDLEWARE = [
    # First, so it times all the others: request id, log context, HTTP metrics, access log (apps/core/middleware.py).
    "apps.core.middleware.RequestObservabilityMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # A database that cannot be reached is a 503 with Retry-After, not a 500 (apps/core/health.py).
    "apps.core.health.DatabaseUnavailableMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last: turns a login refused by the lockout backend into its 429 page (LOGIN_FAILURE_LIMIT).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "memoryhub.urls"
WSGI_APPLICATION = "memoryhub.wsgi.application"
ASGI_APPLICATION = "memoryhub.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database: PostgreSQL + pgvector only -------------------------------------------------------
DATABASE_URL = env_str("DATABASE_URL")
DB_POOL = env_bool("DB_POOL", True)
DB_POOL_MAX_SIZE = env_int("DB_POOL_MAX_SIZE", 10, minimum=1)
EMBEDDED_PG_DIR = Path(env_str("EMBEDDED_PG_DIR", str(DATA_DIR / "pgdata"))).resolve()
EMBEDDED_PG_DATABASE = env_str("EMBEDDED_PG_DATABASE", "memoryhub")

if DATABASE_URL:
    _database = dj_database_url.parse(DATABASE_URL)
    if _database["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("DATABASE_URL must point at PostgreSQL (postgres://...)")
else:
    from memoryhub.embedded_db import ensure_embedded_database

    _database = {
        "ENGINE": "django.db.backends.postgresql",
        **ensure_embedded_database(EMBEDDED_PG_DIR, EMBEDDED_PG_DATABASE),
    }
_database.setdefault("OPTIONS", {})
# While the database is down a request gets a 503 within these (apps/core/health.py): a connection attempt to a
# host that does not answer ends after DB_CONNECT_TIMEOUT_SECONDS (libpq's minimum is 2), and a request waits at
# most DB_POOL_TIMEOUT_SECONDS for a pooled connection (more than a process's request threads never wait for one).
DB_CONNECT_TIMEOUT_SECONDS = env_int("DB_CONNECT_TIMEOUT_SECONDS", 2, minimum=1)
DB_POOL_TIMEOUT_SECONDS = env_float("DB_POOL_TIMEOUT_SECONDS", 1.5)
_database["OPTIONS"].setdefault("connect_timeout", DB_CONNECT_TIMEOUT_SECONDS)
# A statement sent with its parameters bound on the server (the search statement: apps.core.sql) is prepared on a
# connection once it has run there DB_PREPARE_THRESHOLD times (psycopg's prepare_threshold, set for those
# statements only), then parsed no more: a search took a fifth less time in process. 0 turns it off, as a pooler in
# transaction mode needs unless it keeps prepared statements (PgBouncer 1.21 or later, with max_prepared_statements).
DB_PREPARE_THRESHOLD = env_int("DB_PREPARE_THRESHOLD", 1, minimum=0)
if DB_POOL:
    # psycopg's pool instead of CONN_MAX_AGE: persistent connections do not work under ASGI.
    _database["CONN_MAX_AGE"] = 0
    _database["OPTIONS"]["pool"] = {
        "min_size": 1, "max_size": DB_POOL_MAX_SIZE, "timeout": DB_POOL_TIMEOUT_SECONDS,
        # The pool retries a lost connection with a backoff that doubles up to this, then gives up until a request
        # asks again: 5 s instead of psycopg's 5 minutes, whose waits (up to 2 min) held requests back long after
        # the database was back.
        "reconnect_timeout": 5,
    }
else:
    _database["CONN_MAX_AGE"] = env_int("DB_CONN_MAX_AGE", 0, minimum=0)
_database["TEST"] = {"NAME": env_str("TEST_DATABASE_NAME", f"test_{_database['NAME']}")}
DATABASES = {"default": _database}
if not env_str("REDIS_URL"):
    # channels_postgres (the channel layer without Redis) reaches its tables through this alias: the same
    # database, without Django's pool (the layer keeps its own async pool), mirrored in tests.
    DATABASES["channels_postgres"] = {
        **{key: value for key, value in _database.items() if key not in ("OPTIONS", "TEST")},
        "OPTIONS": {key: value for key, value in _database["OPTIONS"].items() if key != "pool"},
        "TEST": {"MIRROR": "default"},
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Auth, i18n, static ---------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(DATA_DIR / "staticfiles"))).resolve()
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = DEBUG
if DEBUG:
    # WhiteNoise serves from finders in development but still expects STATIC_ROOT to exist.
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)

# Flash messages in the (database) session, not in a cookie: the console shows a new webhook's signing secret once.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"

# --- Security (production = DEBUG=false) ---------------------------------------------------------
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
if env_bool("USE_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# The health checks are probed over plain HTTP by load balancers.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]

# --- REST API -------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["apps.tenancy.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["apps.core.permissions.HasApiKey"],
    "DEFAULT_PARSER_CLASSES": ["apps.core.parsers.DepthSafeJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"]
    + (["rest_framework.renderers.BrowsableAPIRenderer"] if DEBUG else []),
    "EXCEPTION_HANDLER": "apps.core.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "apps.core.schema.ApiSchema",
    "UNAUTHENTICATED_USER": None,
    # Throttles (apps/tenancy/throttling.py) count a client by the address uvicorn gives (REMOTE_ADDR, which it
    # takes from X-Forwarded-For only when the proxy is in FORWARDED_ALLOW_IPS), never by a header anyone can send.
    "NUM_PROXIES": 0,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "memoryhub API",
    "DESCRIPTION": "Long-term and working memory for AI agents.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Served from this process, not a CDN: memoryhub runs where there may be no internet.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "MemoryTypeEnum": "apps.memories.models.Memory.Type",
        "TaskStatusEnum": "apps.conversations.models.TaskState.Status",
    },
    # Ids in URL paths (apps.core.identifiers): plain strings, as with Django's own str and path converters.
    "PATH_CONVERTER_OVERRIDES": {"identifier": str, "identifier_path": str},
}
# Bulk writes carry up to 500 memories of up to 8 KiB each, plus metadata.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("MEMORYHUB_MAX_REQUEST_BYTES", 10 * 1024 * 1024, minimum=1024)

# --- memoryhub ------------------------------------------------------------------------------------
MEMORYHUB_DEFAULT_EMBEDDER = env_str("MEMORYHUB_DEFAULT_EMBEDDER", "local")
MEMORYHUB_MAX_BULK = env_int("MEMORYHUB_MAX_BULK", 500, minimum=1)
MEMORYHUB_DEFAULT_MAX_CONTENT_LENGTH = env_int("MEMORYHUB_DEFAULT_MAX_CONTENT_LENGTH", 8192, minimum=16)
MEMORYHUB_MAX_METADATA_BYTES = env_int("MEMORYHUB_MAX_METADATA_BYTES", 16384, minimum=256)
MEMORYHUB_MAX_TAGS = env_int("MEMORYHUB_MAX_TAGS", 32, minimum=1)
MEMORYHUB_MAX_MESSAGES_PER_BATCH = env_int("MEMORYHUB_MAX_MESSAGES_PER_BATCH", 100, minimum=1)
MEMORYHUB_MAX_MESSAGE_CHARS = env_int("MEMORYHUB_MAX_MESSAGE_CHARS", 32768, minimum=64)
# A user's data export (GET .../user-export/<user>) is built in memory; past this it is a 413 pointing at export_store.
MEMORYHUB_USER_EXPORT_MAX_BYTES = env_int("MEMORYHUB_USER_EXPORT_MAX_BYTES", 64 * 1024 * 1024, minimum=1024)
MEMORYHUB_API_KEY_TOUCH_SECONDS = env_int("MEMORYHUB_API_KEY_TOUCH_SECONDS", 60, minimum=0)
# Responses to writes sent with an Idempotency-Key are replayed to retries for this long.
IDEMPOTENCY_TTL_SECONDS = env_int("IDEMPOTENCY_TTL_SECONDS", 24 * 3600, minimum=60)
# A claimed key is leased for this long and renewed every third of it while its request runs: a claim whose lease
# ran out belongs to a request that died with its process, and a retry takes it over.
IDEMPOTENCY_IN_PROGRESS_SECONDS = env_int("IDEMPOTENCY_IN_PROGRESS_SECONDS", 15, minimum=3)

# Vector search compares the query with every filtered memory when there are at most this many (exact,
# and cheap at this size), and uses the approximate HNSW index above it.
SEARCH_EXACT_MAX_ROWS = env_int("SEARCH_EXACT_MAX_ROWS", 2000, minimum=0)
# Ranking defaults for stores that do not set their own (search_defaults): reciprocal rank fusion's constant,
# each signal's weight, and how many memories each signal contributes (the pool, whatever the page size).
SEARCH_FUSION_K = env_int("SEARCH_FUSION_K", 5, minimum=1)
SEARCH_VECTOR_WEIGHT = env_float("SEARCH_VECTOR_WEIGHT", 1.0)
SEARCH_KEYWORD_WEIGHT = env_float("SEARCH_KEYWORD_WEIGHT", 1.0)
SEARCH_CANDIDATE_DEPTH = env_int("SEARCH_CANDIDATE_DEPTH", 100, minimum=1)
# BM25's document count and average length come from the searched scope when it holds at most this many
# memories, else from a sample of this many (the count estimated from the share of it matching the query).
SEARCH_KEYWORD_STATS_MAX_ROWS = env_int("SEARCH_KEYWORD_STATS_MAX_ROWS", 2000, minimum=1)
# pgvector >= 0.8: let HNSW scans continue until enough rows pass the search filters (user, type...)
# instead of stopping after ef_search candidates. Set per connection so searches need no transaction.
# A prepared search is still planned for its own values (force_custom_plan): whether the HNSW index, an exact scan
# or the GIN index pays depends on the size of the store and of the user, which one plan for all would not see.
_database["OPTIONS"].setdefault("options", "-c hnsw.iterative_scan=relaxed_order -c plan_cache_mode=force_custom_plan")

EMBEDDING_OPENAI_BASE_URL = env_str("EMBEDDING_OPENAI_BASE_URL", "https://api.openai.com/v1")
EMBEDDING_OPENAI_API_KEY = env_str("EMBEDDING_OPENAI_API_KEY", "")
EMBEDDING_OPENAI_MODEL = env_str("EMBEDDING_OPENAI_MODEL", "text-embedding-3-small")
EMBEDDING_OPENAI_DIMENSION = env_int("EMBEDDING_OPENAI_DIMENSION", 1536, minimum=1)
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 128, minimum=1)
EMBEDDING_TIMEOUT_SECONDS = env_float("EMBEDDING_TIMEOUT_SECONDS", 30.0)
EMBEDDING_MAX_RETRIES = env_int("EMBEDDING_MAX_RETRIES", 3, minimum=0)
EMBEDDING_LOCAL_DEVICE = env_str("EMBEDDING_LOCAL_DEVICE", "cpu")
# Threads of one run of the local model (0: the runtime's default, one per core). Every web and q2 worker process
# runs its own model; with several threads each, they wait on cores the others hold and a one-clause encode takes
# several times as long. With ONNX Runtime, concurrent calls and the chunks of a long list run in parallel anyway.
EMBEDDING_LOCAL_THREADS = env_int("EMBEDDING_LOCAL_THREADS", 1, minimum=0)
# Search queries whose vectors each process keeps (least recently used out; 0: none).
EMBEDDING_QUERY_CACHE_SIZE = env_int("EMBEDDING_QUERY_CACHE_SIZE", 1024, minimum=0)
# A web process starts loading the local models its stores use as it starts, instead of at its first search.
EMBEDDING_LOAD_AT_START = env_bool("EMBEDDING_LOAD_AT_START", True)
# What runs the local model: onnx (ONNX Runtime on an export of the shipped weights, made once under
# DATA_DIR/models), torch (sentence-transformers), or auto: onnx when it can on the CPU, else torch. Same vectors.
EMBEDDING_LOCAL_RUNTIME = env_str("EMBEDDING_LOCAL_RUNTIME", "auto")
if EMBEDDING_LOCAL_RUNTIME not in ("auto", "onnx", "torch"):
    raise ImproperlyConfigured(f"EMBEDDING_LOCAL_RUNTIME must be auto, onnx or torch, got {EMBEDDING_LOCAL_RUNTIME!r}")

# --- LLM extraction (apps/extraction/extractors/llm) -------------------------------------------------
# Read here, checked by the extraction app's system check (apps/extraction/checks.py) against what the
# extractor accepts: `manage.py check`, migrate, serve and qcluster refuse a bad value, naming it.
LLM_PROVIDER = env_str("LLM_PROVIDER", "openai")  # openai or anthropic
LLM_BASE_URL = env_str("LLM_BASE_URL", "")  # empty: https://api.openai.com/v1 or https://api.anthropic.com
LLM_API_KEY = env_str("LLM_API_KEY", "")  # or LLM_API_KEY_FILE
LLM_MODEL = env_str("LLM_MODEL", "")  # empty: gpt-4o-mini or claude-haiku-4-5
LLM_TIMEOUT_SECONDS = env_float("LLM_TIMEOUT_SECONDS", 60.0)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 2)
LLM_MAX_TOKENS = env_int("LLM_MAX_TOKENS", 2048)
# "none" leaves temperature out of the request: some reasoning models refuse anything but their default.
_llm_temperature_omitted = env_str("LLM_TEMPERATURE", "0").strip().lower() == "none"
LLM_TEMPERATURE = None if _llm_temperature_omitted else env_float("LLM_TEMPERATURE", 0.0)
LLM_STRUCTURED_OUTPUT = env_bool("LLM_STRUCTURED_OUTPUT", True)
# openai: the name of the output limit. OpenAI's reasoning models (o1, o3, o4-mini, gpt-5...) refuse max_tokens
# and other servers may not know max_completion_tokens; auto picks by model name and switches once per process
# when a server answers 400 naming the parameter it does not support.
LLM_TOKEN_LIMIT_PARAMETER = env_str("LLM_TOKEN_LIMIT_PARAMETER", "auto")
# Estimated input tokens per request (instructions, examples, existing memories and messages); a longer batch
# is extracted in several consecutive windows. At least 3000.
LLM_CONTEXT_BUDGET_TOKENS = env_int("LLM_CONTEXT_BUDGET_TOKENS", 8000)
# Worked examples after the instructions (about 1,900 tokens of every request; strong models may do without).
LLM_FEW_SHOT_EXAMPLES = env_bool("LLM_FEW_SHOT_EXAMPLES", True)
# --- end LLM extraction

# --- Working state (per-session working memory, scratchpad, checkpoints) --------------------------
# Defaults for every store; a store's working_memory_config overrides them per key.
WORKING_MEMORY_DEFAULT_TTL_SECONDS = env_int("WORKING_MEMORY_DEFAULT_TTL_SECONDS", 0, minimum=0)  # 0: no expiry
WORKING_MEMORY_MAX_ITEMS = env_int("WORKING_MEMORY_MAX_ITEMS", 1000, minimum=1)
WORKING_MEMORY_MAX_VALUE_BYTES = env_int("WORKING_MEMORY_MAX_VALUE_BYTES", 64 * 1024, minimum=16)
SCRATCHPAD_MAX_ENTRIES = env_int("SCRATCHPAD_MAX_ENTRIES", 500, minimum=1)
SCRATCHPAD_MAX_ENTRY_CHARS = env_int("SCRATCHPAD_MAX_ENTRY_CHARS", 16384, minimum=64)
CHECKPOINT_TTL_SECONDS = env_int("CHECKPOINT_TTL_SECONDS", 7 * 24 * 3600, minimum=0)  # 0: kept until deleted
CHECKPOINT_MAX_PER_SESSION = env_int("CHECKPOINT_MAX_PER_SESSION", 50, minimum=1)
# How long terminate waits for the final extraction before writing the episode anyway.
TERMINATE_EXTRACTION_WAIT_SECONDS = env_float("TERMINATE_EXTRACTION_WAIT_SECONDS", 30.0)

# --- Extraction --------------------------------------------------------------------------------------
EXTRACTION_MAX_ATTEMPTS = env_int("EXTRACTION_MAX_ATTEMPTS", 3, minimum=1)
EXTRACTION_RETRY_BACKOFF_SECONDS = env_int("EXTRACTION_RETRY_BACKOFF_SECONDS", 10, minimum=0)
# A running job's lease, renewed every third of it while its worker lives; once it runs out (the worker died), a
# worker's next round (WORKER_HEARTBEAT_SECONDS) queues the job again: a killed job resumes within about the sum.
EXTRACTION_LEASE_SECONDS = env_int("EXTRACTION_LEASE_SECONDS", 15, minimum=3)
# Run extraction jobs in the enqueuing process instead of a q2 worker (tests of the logic, not the queue).
EXTRACTION_RUN_INLINE = env_bool("EXTRACTION_RUN_INLINE", False)
# After its own job, a worker's task runs the rules jobs queued behind it until this long after it started, plus the
# job in hand (0: only its own).
EXTRACTION_DRAIN_SECONDS = env_float("EXTRACTION_DRAIN_SECONDS", 2.0)
if EXTRACTION_DRAIN_SECONDS < 0:
    raise ImproperlyConfigured("EXTRACTION_DRAIN_SECONDS must not be negative")
EXTRACTION_NEAR_DUPLICATE_SIMILARITY = env_float("EXTRACTION_NEAR_DUPLICATE_SIMILARITY", 0.92)
# Defaults of the stores' extraction_config. auto: llm when a model is configured (LLM_API_KEY or LLM_BASE_URL),
# rules otherwise; llm needs a model (both checked by apps/extraction/checks.py).
EXTRACTION_DEFAULT_EXTRACTOR = env_str("EXTRACTION_DEFAULT_EXTRACTOR", "auto")
# A job whose model failed on its last attempt runs the rules extractor instead of failing.
EXTRACTION_FALLBACK_TO_RULES = env_bool("EXTRACTION_FALLBACK_TO_RULES", False)
# The rules extractor's generic statement path: first-person statements no rule recognised, kept when the
# salience classifier (apps/extraction/salience) scores them at or above the threshold.
EXTRACTION_SALIENCE = env_bool("EXTRACTION_SALIENCE", True)
EXTRACTION_SALIENCE_THRESHOLD = env_float("EXTRACTION_SALIENCE_THRESHOLD", 0.7)
if not 0.0 <= EXTRACTION_SALIENCE_THRESHOLD <= 1.0:
    raise ImproperlyConfigured("EXTRACTION_SALIENCE_THRESHOLD must be between 0 and 1")

# --- Background jobs (django-q2) and live updates (Channels) --------------------------------------
REDIS_URL = env_str("REDIS_URL")
Q_CLUSTER = {
    "name": "memoryhub",
    "workers": env_int("Q_WORKERS", 2, minimum=1),
    "timeout": env_int("Q_TIMEOUT_SECONDS", 300, minimum=1),
    "retry": env_int("Q_RETRY_SECONDS", 360, minimum=2),
    "max_attempts": env_int("Q_MAX_ATTEMPTS", 3, minimum=1),
    "catch_up": False,
    # The ORM broker sleeps this long when its queue is empty: the floor of extraction lag.
    "poll": env_float("Q_POLL_SECONDS", 0.05),
    # Successful results are not kept (ExtractionJob rows record outcomes); pruning them cost a
    # locked read of every kept row after each task. Failures are always kept.
    "save_limit": env_int("Q_SAVE_LIMIT", -1, minimum=-1),
    "label": "Background jobs",
}
if Q_CLUSTER["retry"] <= Q_CLUSTER["timeout"]:
    raise ImproperlyConfigured("Q_RETRY_SECONDS must be larger than Q_TIMEOUT_SECONDS")
# A task runs queued jobs until this long after it started, plus the one in hand: well within q2's timeout.
if EXTRACTION_DRAIN_SECONDS * 2 > Q_CLUSTER["timeout"]:
    raise ImproperlyConfigured("EXTRACTION_DRAIN_SECONDS must be at most half of Q_TIMEOUT_SECONDS")
# Every q2 worker process records a heartbeat and queues again the jobs whose lease ran out, this often.
WORKER_HEARTBEAT_SECONDS = env_float("WORKER_HEARTBEAT_SECONDS", 5.0)
if WORKER_HEARTBEAT_SECONDS <= 0:
    raise ImproperlyConfigured("WORKER_HEARTBEAT_SECONDS must be positive")
# /readyz fails when the oldest extraction job due to run has waited longer than this for a worker; 0: not checked.
READINESS_MAX_QUEUE_LAG_SECONDS = env_float("READINESS_MAX_QUEUE_LAG_SECONDS", 120.0)
if REDIS_URL:
    Q_CLUSTER["redis"] = REDIS_URL
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [REDIS_URL]}}
    }
else:
    Q_CLUSTER["orm"] = "default"
    # LISTEN/NOTIFY on the same PostgreSQL: events from the worker process reach the web processes' websockets.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_postgres.core.PostgresChannelLayer",
            "CONFIG": {
                **{key: value for key, value in DATABASES["channels_postgres"].items() if key != "TEST"},
                "TIME_ZONE": None,
                # A listener's membership lasts a day unless its consumer renews it (as channels-redis does); what
                # a dead web process leaves behind expires and is purged (apps.memories.tasks.purge_live_messages).
                "group_expiry": 24 * 3600,
                "PSYCOPG_OPTIONS": {"min_size": 1, "max_size": env_int("CHANNEL_LAYER_POOL_MAX_SIZE", 4, minimum=1)},
            },
        }
    }

# --- Logs and metrics (memoryhub/logging.py, apps/core/metrics.py) ---------------------------------
# json: one JSON object per line with the request id, the API key's prefix and the tenant (for a log shipper);
# text: for a terminal. One access-log line per request (memoryhub.access, INFO) unless ACCESS_LOG=false.
LOG_FORMAT = env_str("LOG_FORMAT", "text" if DEBUG else "json")
if LOG_FORMAT not in LOG_FORMATS:
    raise ImproperlyConfigured(f"LOG_FORMAT must be one of {', '.join(LOG_FORMATS)}, got {LOG_FORMAT!r}")
ACCESS_LOG = env_bool("ACCESS_LOG", True)
LOGGING = logging_config(log_format=LOG_FORMAT, level=env_str("LOG_LEVEL", "INFO"), access_log=ACCESS_LOG)
METRICS_ENABLED = env_bool("METRICS_ENABLED", True)
# GET /metrics takes this bearer token; without one, an admin-scope API key.
METRICS_TOKEN = env_str("MEMORYHUB_METRICS_TOKEN", "")
# prometheus_client's own variable: where every process of the machine writes its metrics (`serve` sets it to
# DATA_DIR/metrics and empties it at start); unset, each process counts for itself.
PROMETHEUS_MULTIPROC_DIR = env_str("PROMETHEUS_MULTIPROC_DIR", "")

# --- Webhooks ---------------------------------------------------------------------------------------
# Outgoing webhooks per store (apps/memories/services/webhooks.py): each delivery is a django-q2 task, retried
# after WEBHOOK_BACKOFF_SECONDS × 4^(attempt − 1), at most WEBHOOK_BACKOFF_MAX_SECONDS: with the defaults six
# attempts over about an hour, so a receiver may restart or redeploy without losing events.
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 6, minimum=1)
WEBHOOK_BACKOFF_SECONDS = env_int("WEBHOOK_BACKOFF_SECONDS", 10, minimum=0)
WEBHOOK_BACKOFF_MAX_SECONDS = env_int("WEBHOOK_BACKOFF_MAX_SECONDS", 3600, minimum=0)
# Deliveries failed for good in a row (each after all its attempts) before the webhook is disabled; 0: never.
WEBHOOK_DISABLE_AFTER_FAILURES = env_int("WEBHOOK_DISABLE_AFTER_FAILURES", 5, minimum=0)
WEBHOOK_CONNECT_TIMEOUT_SECONDS = env_float("WEBHOOK_CONNECT_TIMEOUT_SECONDS", 3.0)
WEBHOOK_TIMEOUT_SECONDS = env_float("WEBHOOK_TIMEOUT_SECONDS", 10.0)
if WEBHOOK_CONNECT_TIMEOUT_SECONDS <= 0 or WEBHOOK_TIMEOUT_SECONDS <= 0:
    raise ImproperlyConfigured("WEBHOOK_CONNECT_TIMEOUT_SECONDS and WEBHOOK_TIMEOUT_SECONDS must be positive")
# Off: a webhook URL whose host is (or resolves to) a private, loopback or link-local address is refused, when
# it is saved and again at each send, so a store admin cannot make the server call into its own network.
WEBHOOK_ALLOW_PRIVATE_ADDRESSES = env_bool("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", False)
WEBHOOK_MAX_PER_STORE = env_int("WEBHOOK_MAX_PER_STORE", 20, minimum=1)
# Deliveries hold the events' data (memory content): the sweep deletes them after this many days.
WEBHOOK_DELIVERY_RETENTION_DAYS = env_int("WEBHOOK_DELIVERY_RETENTION_DAYS", 30, minimum=1)

# --- Limits: API throttling, tenant quotas, login lockout ------------------------------------------
# Counters every web process shares: a table of the database (created by a migration), or Redis with REDIS_URL.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "shared": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
               "KEY_PREFIX": "memoryhub"}
    if REDIS_URL
    # Django's DatabaseCache with one-statement writes (apps/core/cache.py). A counter per API key and kind of
    # request: far below MAX_ENTRIES, past which culling would drop live counters.
    else {"BACKEND": "apps.core.cache.PostgresCache", "LOCATION": "memoryhub_shared_cache",
          "OPTIONS": {"MAX_ENTRIES": 100_000}},
}
# Requests per minute and API key, per kind of request; a tenant's own limits (admin) override these; 0: no limit.
MEMORYHUB_THROTTLE = env_bool("MEMORYHUB_THROTTLE", True)
MEMORYHUB_THROTTLE_READS_PER_MINUTE = env_int("MEMORYHUB_THROTTLE_READS_PER_MINUTE", 600, minimum=0)
MEMORYHUB_THROTTLE_WRITES_PER_MINUTE = env_int("MEMORYHUB_THROTTLE_WRITES_PER_MINUTE", 300, minimum=0)
MEMORYHUB_THROTTLE_SEARCHES_PER_MINUTE = env_int("MEMORYHUB_THROTTLE_SEARCHES_PER_MINUTE", 300, minimum=0)
MEMORYHUB_THROTTLE_FLUSHES_PER_MINUTE = env_int("MEMORYHUB_THROTTLE_FLUSHES_PER_MINUTE", 30, minimum=0)
# Requests per minute and client address that bring no API key or a wrong one.
MEMORYHUB_THROTTLE_FAILED_AUTH_PER_MINUTE = env_int("MEMORYHUB_THROTTLE_FAILED_AUTH_PER_MINUTE", 30, minimum=0)
# Quotas per tenant (a tenant's own override these); 0: none. The request size is at most MEMORYHUB_MAX_REQUEST_BYTES.
MEMORYHUB_MAX_MEMORIES = env_int("MEMORYHUB_MAX_MEMORIES", 0, minimum=0)
MEMORYHUB_MAX_STORES = env_int("MEMORYHUB_MAX_STORES", 0, minimum=0)

# Logins to the admin and the console (django-axes): after this many failures for one username from one address,
# that pair is refused (429, even with the right password) for LOGIN_LOCKOUT_MINUTES; 0: no lockout.
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=0)
LOGIN_LOCKOUT_MINUTES = env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1)
AUTHENTICATION_BACKENDS = [
    "apps.tenancy.authentication.LoginLockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = LOGIN_FAILURE_LIMIT > 0
AXES_FAILURE_LIMIT = max(LOGIN_FAILURE_LIMIT, 1)
AXES_COOLOFF_TIME = timedelta(minutes=LOGIN_LOCKOUT_MINUTES)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False  # no banner at every start; failures and lockouts are still logged (warnings)
AXES_LOCKOUT_CALLABLE = "apps.tenancy.authentication.login_locked_out_response"
# The socket's address, as the API throttles count it (an X-Forwarded-For header is anyone's to write).
AXES_CLIENT_IP_CALLABLE = "apps.tenancy.authentication.client_address"
