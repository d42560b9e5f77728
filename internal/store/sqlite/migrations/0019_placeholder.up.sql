-- Placeholder so that 0020 follows a 0019 on this branch: the request
-- log brings the real 0019. Delete this file when merging it.
SELECT 1;
