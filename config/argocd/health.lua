-- Argo CD health check for ontime.dev/ScheduledJob (docs/operations.md,
-- "GitOps"). It reads the controller's Ready condition, whose reasons are
-- API (api/v1alpha1/scheduledjob_status.go): tools may match on them.
local hs = {status = "Progressing", message = "Waiting for the ontime controller"}
if obj.status == nil or obj.status.conditions == nil then
  return hs
end
-- A status written for an older spec says nothing about this one.
if obj.metadata.generation ~= nil and obj.status.observedGeneration ~= nil
    and obj.status.observedGeneration < obj.metadata.generation then
  return hs
end
local ready, capacity = nil, nil
for _, condition in ipairs(obj.status.conditions) do
  if condition.type == "Ready" then
    ready = condition
  elseif condition.type == "CapacityReady" then
    capacity = condition
  end
end
if ready == nil then
  return hs
end
hs.message = ready.message or ready.reason or ""
if ready.status == "True" then
  -- Warm-up pods that cannot be created make runs start cold.
  if capacity ~= nil and capacity.status == "False" and capacity.reason == "WarmUpFailed" then
    hs.status = "Degraded"
    hs.message = capacity.message or capacity.reason
  else
    hs.status = "Healthy"
  end
elseif ready.reason == "Suspended" then
  hs.status = "Suspended"
elseif ready.reason == "Terminating" or ready.reason == "SpreadPending" then
  hs.status = "Progressing"
elseif ready.status == "False" then
  -- InvalidSchedule, UnknownTimeZone, JobNameConflict: runs cannot start
  -- until the spec (or the conflicting Job) is fixed.
  hs.status = "Degraded"
end
return hs
