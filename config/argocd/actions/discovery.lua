-- Argo CD resource actions of ontime.dev/ScheduledJob.
local actions = {}
-- "Run now" works while suspended too, as `ontime trigger` does.
actions["run-now"] = {["disabled"] = obj.metadata.deletionTimestamp ~= nil}
return actions
