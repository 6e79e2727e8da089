// The pod's observed statuses, the actions a user can ask for, and the statuses a user can desire.
export const POD_STATUSES = ['PROVISIONING', 'STARTING', 'RUNNING', 'EXITED', 'ERROR', 'TERMINATED'] as const;
export type PodStatus = (typeof POD_STATUSES)[number];
export const POD_ACTIONS = ['start', 'stop', 'restart', 'terminate'] as const;
export type PodAction = (typeof POD_ACTIONS)[number];
/** what the user asked for; the provisioner moves the observed `status` toward it */
export type DesiredStatus = 'RUNNING' | 'EXITED' | 'TERMINATED';
