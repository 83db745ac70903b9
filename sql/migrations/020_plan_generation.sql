-- Migration 020: plan step generation, audit_log session index, pending-approval index.
ALTER TABLE nomos_plan_steps ADD COLUMN generation int NOT NULL DEFAULT 1;
CREATE INDEX audit_log_session_id_idx ON audit_log (session_id);
CREATE INDEX nomos_plan_executions_pending_approval_idx
    ON nomos_plan_executions (session_id) WHERE status = 'pending_approval';

INSERT INTO schema_migrations (version) VALUES (20);
