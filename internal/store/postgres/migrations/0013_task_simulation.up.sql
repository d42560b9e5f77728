-- The development simulator's decision for a pending task: 'succeed', or
-- 'fail:' and the failure reason ('fail:' alone for the product's default
-- reason). It is set in the transaction that makes the task pending and
-- cleared when the task ends, so the partial index holds only the tasks
-- the simulator still has to work. Production tasks never have one.
--
-- Before, each of these tasks had its own River job (task_simulate), whose
-- insert, fetch and completion cost about as much as the rest of a
-- POST /card besides RSA; older jobs of that kind are still worked.
ALTER TABLE tasks ADD COLUMN simulation text;

CREATE INDEX tasks_simulation ON tasks (created_at, id) WHERE simulation IS NOT NULL;
