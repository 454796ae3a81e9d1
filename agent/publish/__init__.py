"""Publishing an approved draft to the issue tracker."""
