// A job's `s3Config` (runpod-compat.md 2.1): the bucket its worker uploads results to. The control
// plane never calls the bucket; it keeps the config with the job, the secret sealed with the data
// directory's key (as worker tokens and env are), and hands it to the worker in clear with the job,
// the only place it is meant for. No answer, webhook, log line or file shows the secret.
import type { JobS3Config } from '../../model/index.ts';
import type { SecretBox } from '../../store/index.ts';
import type { SealedS3Config } from '../../model/index.ts';

/** the sealed secret is bound to the endpoint: it opens only for that endpoint's jobs */
const context = (endpointId: string) => `jobs/${endpointId}/s3Config`;

/** the fields after the secret, the same sealed and open */
type BucketFields = Pick<JobS3Config, 'bucketName' | 'endpointUrl' | 'objectPath'>;

/** the bucket fields copied as sent, objectPath only when given */
const bucket = (c: BucketFields): BucketFields => ({
  bucketName: c.bucketName,
  endpointUrl: c.endpointUrl,
  ...(c.objectPath !== undefined ? { objectPath: c.objectPath } : {}),
});

export function sealS3Config(box: SecretBox, endpointId: string, c: JobS3Config): SealedS3Config {
  return {
    accessId: c.accessId,
    accessSecretSealed: box.seal(c.accessSecret, context(endpointId)),
    ...bucket(c),
  };
}

/** what the worker receives as the job's `s3Config`: the fields as the user sent them */
export function openS3Config(box: SecretBox, endpointId: string, c: SealedS3Config): JobS3Config {
  return {
    accessId: c.accessId,
    accessSecret: box.open(c.accessSecretSealed, context(endpointId)),
    ...bucket(c),
  };
}
