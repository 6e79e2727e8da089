// core/endpoints: serverless endpoints (v1 and v2 records), templates and the pins other accounts hold
// on a public template, and the URLs an endpoint is called at.
export { endpointDataCenters, type EndpointSaveOptions, EndpointService, toEndpointView } from './endpoint-service.ts';
export { createEndpointV2, endpointV2Containers, toEndpointV2View, updateEndpointV2 } from './endpoint-v2.ts';
export { endpointRequestUrls, type RequestUrls } from './request-urls.ts';
export { pinEndpointsOfOthers, workerTemplate, type WorkerTemplate } from './template-pins.ts';
export { TemplateService, toTemplateView } from './template-service.ts';
export { gpuTypesNoHostHas, gpuTypeWarnings, noHostReason } from './gpu-coverage.ts';
