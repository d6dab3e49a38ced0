/**
 * Public data types of the host and the driver (SPEC §1, §2), one import for every plugin. Plain
 * types only: no cordis registration, no runtime code. Each topic has its own file in `types/`;
 * a file there imports its neighbours directly, never this index.
 */
export type { ApprovalDecisionWord, ApprovalPolicy, ApprovalRule } from './approval/policy.ts'
export type { BudgetLimit } from './errors.ts'
export type * from './types/agent.ts'
export type * from './types/content.ts'
export type * from './types/driver-hooks.ts'
export type * from './types/json.ts'
export type * from './types/model.ts'
export type * from './types/run.ts'
export type * from './types/session.ts'
export type * from './types/tool.ts'
