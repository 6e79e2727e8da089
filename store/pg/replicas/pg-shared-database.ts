// The ports replicas share through PostgreSQL (store/base/shared-database.ts), on the store's pool.
import type pg from 'pg';
import type { JobRows } from '../../base/job-rows.ts';
import type { HostLeaseTable, Leadership, RateWindows, SharedDatabase } from '../../base/shared-database.ts';
import { PgJobRows } from '../jobs/pg-job-rows.ts';
import { PgHostLeaseTable } from './pg-host-leases.ts';
import { PgLeadership } from './pg-leadership.ts';
import { PgRateWindows } from './pg-rate-windows.ts';

export class PgSharedDatabase implements SharedDatabase {
  constructor(private readonly pool: pg.Pool) {}

  hostLeaseTable(): HostLeaseTable {
    return new PgHostLeaseTable(this.pool);
  }

  leadership(replicaId: string, name: string, ttlMs: number): Leadership {
    return new PgLeadership(this.pool, replicaId, name, ttlMs);
  }

  rateWindows(): RateWindows {
    return new PgRateWindows(this.pool);
  }

  jobRows(): JobRows {
    return new PgJobRows(this.pool);
  }
}
