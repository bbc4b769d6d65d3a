-- "Run now": the same request as `ontime trigger`, the annotation
-- ontime.dev/trigger set to the request's time. The controller starts the
-- run (obeying concurrencyPolicy) and removes the annotation; a request
-- with a new time is a new run, the same one handled twice is one.
if obj.metadata.annotations == nil then
  obj.metadata.annotations = {}
end
obj.metadata.annotations["ontime.dev/trigger"] = os.date("!%Y-%m-%dT%H:%M:%SZ")
return obj
