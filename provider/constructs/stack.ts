// A stack of gpufleet resources. Any TerraformStack works (the constructs add the null provider they
// need); this one also pins the local backend path so the synth output does not depend on the cwd.
import { LocalBackend, TerraformStack } from 'cdktf';
import type { Construct } from 'constructs';

export class GpufleetStack extends TerraformStack {
  constructor(scope: Construct, name: string) {
    super(scope, name);
    new LocalBackend(this, { path: `terraform.${name}.tfstate` });
  }
}
