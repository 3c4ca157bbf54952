"""The messages that cross a boundary: workflow and activity inputs and outputs, the views
the API serves. Below both the workflows and the activities, so that neither imports the
other's package for a type."""
