from rest_framework import serializers

from apps.conversations.context import FORMATS, KINDS
from apps.core.fields import CleanCharField, FiniteFloatField, IdentifierField, StrictIntegerField

MIN_TOKEN_BUDGET = 50
MAX_TOKEN_BUDGET = 200_000


class ContextInput(serializers.Serializer):
    query = CleanCharField(max_length=4000, help_text="What the agent is about to answer; ranks the memories.")
    user_id = IdentifierField()
    session_id = IdentifierField(required=False, allow_null=True, default=None,
                                 help_text="Adds the session's working state (task, working memory, scratchpad).")
    token_budget = StrictIntegerField(required=False, default=2000, min_value=MIN_TOKEN_BUDGET,
                                      max_value=MAX_TOKEN_BUDGET, help_text="Estimated as ceil(characters / 4).")
    kinds = serializers.ListField(
        child=serializers.ChoiceField(choices=KINDS), required=False, allow_empty=False, default=list(KINDS),
    )
    format = serializers.ChoiceField(choices=FORMATS, required=False, default="xml")
    shares = serializers.DictField(
        child=FiniteFloatField(min_value=0, max_value=1000), required=False, default=None, allow_null=True,
        help_text="Relative weight of each kind in the budget; default working_state 0.3, facts 0.4, "
                  "episodes 0.2, procedures 0.1 (normalised over the requested kinds).",
    )

    def validate_shares(self, shares):
        if shares is None:
            return None
        unknown = sorted(set(shares) - set(KINDS))
        if unknown:
            raise serializers.ValidationError(f"Unknown kinds: {', '.join(unknown)}; allowed: {', '.join(KINDS)}.")
        return shares

    def validate_query(self, query):
        if not query.strip():
            raise serializers.ValidationError("Must not be blank.")
        return query


class ContextEntryOutput(serializers.Serializer):
    id = serializers.CharField(help_text="A memory id, working_memory:<key>, task_state or scratchpad:<seq>.")
    kind = serializers.CharField()
    source = serializers.CharField()
    type = serializers.CharField()
    score = serializers.FloatField(allow_null=True)
    tokens = serializers.IntegerField()


class ContextOutput(serializers.Serializer):
    context = serializers.CharField(help_text="The block to put in the prompt.")
    format = serializers.CharField()
    token_budget = serializers.IntegerField()
    tokens_estimated = serializers.IntegerField()
    included = ContextEntryOutput(many=True)
    left_out = ContextEntryOutput(many=True, help_text="Candidates that did not fit the budget.")
    kinds = serializers.DictField()
