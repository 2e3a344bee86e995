"""The review console's views, one module per page (apps.review.urls names them)."""
