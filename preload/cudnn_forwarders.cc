// Local definitions of the cuDNN functions that the client's cuDNN helpers
// (tunedb/cudnn_helpers.h and the cudnn/ layer under them) call, each
// forwarding to the program's cuDNN (real_cudnn.h, through the shim). They
// keep libtunedb_preload_core.so from needing libcudnn itself: its version
// script (libtunedb_preload_core.map) keeps these names local, so they serve
// only the core's own calls and never interpose on the program's.
//
// The list is what the link needs (nm -u on the helpers' objects); a function
// missing here makes the link pull in libcudnn, which the post-build check in
// CMakeLists.txt refuses. Calls fail with CUDNN_STATUS_NOT_INITIALIZED where
// no cuDNN is loaded.
//
// Thread safety: as cuDNN's own functions.
#include <cudnn.h>

#include "preload/real_cudnn.h"

#define TUNEDB_FORWARD(name, params, args)                               \
  extern "C" cudnnStatus_t name params {                                 \
    static tunedb::preload::RealFunction<decltype(&::name)> real(#name); \
    auto f = real.get();                                                 \
    return f != nullptr ? f args : CUDNN_STATUS_NOT_INITIALIZED;         \
  }

extern "C" size_t cudnnGetVersion(void) {
  static tunedb::preload::RealFunction<decltype(&::cudnnGetVersion)> real(
      "cudnnGetVersion");
  auto f = real.get();
  return f != nullptr ? f() : 0;
}

extern "C" const char *cudnnGetErrorString(cudnnStatus_t status) {
  static tunedb::preload::RealFunction<decltype(&::cudnnGetErrorString)> real(
      "cudnnGetErrorString");
  auto f = real.get();
  return f != nullptr ? f(status) : "cuDNN is not loaded";
}

TUNEDB_FORWARD(cudnnConvolutionBackwardData,
               (cudnnHandle_t handle, const void *alpha,
                const cudnnFilterDescriptor_t wDesc, const void *w,
                const cudnnTensorDescriptor_t dyDesc, const void *dy,
                const cudnnConvolutionDescriptor_t convDesc,
                cudnnConvolutionBwdDataAlgo_t algo, void *workSpace,
                size_t workSpaceSizeInBytes, const void *beta,
                const cudnnTensorDescriptor_t dxDesc, void *dx),
               (handle, alpha, wDesc, w, dyDesc, dy, convDesc, algo, workSpace,
                workSpaceSizeInBytes, beta, dxDesc, dx))

TUNEDB_FORWARD(cudnnConvolutionBackwardFilter,
               (cudnnHandle_t handle, const void *alpha,
                const cudnnTensorDescriptor_t xDesc, const void *x,
                const cudnnTensorDescriptor_t dyDesc, const void *dy,
                const cudnnConvolutionDescriptor_t convDesc,
                cudnnConvolutionBwdFilterAlgo_t algo, void *workSpace,
                size_t workSpaceSizeInBytes, const void *beta,
                const cudnnFilterDescriptor_t dwDesc, void *dw),
               (handle, alpha, xDesc, x, dyDesc, dy, convDesc, algo, workSpace,
                workSpaceSizeInBytes, beta, dwDesc, dw))

TUNEDB_FORWARD(cudnnConvolutionForward,
               (cudnnHandle_t handle, const void *alpha,
                const cudnnTensorDescriptor_t xDesc, const void *x,
                const cudnnFilterDescriptor_t wDesc, const void *w,
                const cudnnConvolutionDescriptor_t convDesc,
                cudnnConvolutionFwdAlgo_t algo, void *workSpace,
                size_t workSpaceSizeInBytes, const void *beta,
                const cudnnTensorDescriptor_t yDesc, void *y),
               (handle, alpha, xDesc, x, wDesc, w, convDesc, algo, workSpace,
                workSpaceSizeInBytes, beta, yDesc, y))

TUNEDB_FORWARD(cudnnCreate, (cudnnHandle_t * handle), (handle))

TUNEDB_FORWARD(cudnnCreateConvolutionDescriptor,
               (cudnnConvolutionDescriptor_t * convDesc), (convDesc))

TUNEDB_FORWARD(cudnnCreateFilterDescriptor,
               (cudnnFilterDescriptor_t * filterDesc), (filterDesc))

TUNEDB_FORWARD(cudnnCreateTensorDescriptor,
               (cudnnTensorDescriptor_t * tensorDesc), (tensorDesc))

TUNEDB_FORWARD(cudnnDestroyConvolutionDescriptor,
               (cudnnConvolutionDescriptor_t convDesc), (convDesc))

TUNEDB_FORWARD(cudnnDestroyFilterDescriptor,
               (cudnnFilterDescriptor_t filterDesc), (filterDesc))

TUNEDB_FORWARD(cudnnDestroyTensorDescriptor,
               (cudnnTensorDescriptor_t tensorDesc), (tensorDesc))

TUNEDB_FORWARD(cudnnGetConvolutionBackwardDataWorkspaceSize,
               (cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
                const cudnnTensorDescriptor_t dyDesc,
                const cudnnConvolutionDescriptor_t convDesc,
                const cudnnTensorDescriptor_t dxDesc,
                cudnnConvolutionBwdDataAlgo_t algo, size_t *sizeInBytes),
               (handle, wDesc, dyDesc, convDesc, dxDesc, algo, sizeInBytes))

TUNEDB_FORWARD(cudnnGetConvolutionBackwardFilterWorkspaceSize,
               (cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                const cudnnTensorDescriptor_t dyDesc,
                const cudnnConvolutionDescriptor_t convDesc,
                const cudnnFilterDescriptor_t gradDesc,
                cudnnConvolutionBwdFilterAlgo_t algo, size_t *sizeInBytes),
               (handle, xDesc, dyDesc, convDesc, gradDesc, algo, sizeInBytes))

TUNEDB_FORWARD(cudnnGetConvolutionForwardWorkspaceSize,
               (cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                const cudnnFilterDescriptor_t wDesc,
                const cudnnConvolutionDescriptor_t convDesc,
                const cudnnTensorDescriptor_t yDesc,
                cudnnConvolutionFwdAlgo_t algo, size_t *sizeInBytes),
               (handle, xDesc, wDesc, convDesc, yDesc, algo, sizeInBytes))

TUNEDB_FORWARD(cudnnGetConvolutionGroupCount,
               (cudnnConvolutionDescriptor_t convDesc, int *groupCount),
               (convDesc, groupCount))

TUNEDB_FORWARD(cudnnGetConvolutionMathType,
               (cudnnConvolutionDescriptor_t convDesc,
                cudnnMathType_t *mathType),
               (convDesc, mathType))

TUNEDB_FORWARD(cudnnGetConvolutionNdDescriptor,
               (const cudnnConvolutionDescriptor_t convDesc,
                int arrayLengthRequested, int *arrayLength, int padA[],
                int strideA[], int dilationA[], cudnnConvolutionMode_t *mode,
                cudnnDataType_t *computeType),
               (convDesc, arrayLengthRequested, arrayLength, padA, strideA,
                dilationA, mode, computeType))

TUNEDB_FORWARD(cudnnGetConvolutionNdForwardOutputDim,
               (const cudnnConvolutionDescriptor_t convDesc,
                const cudnnTensorDescriptor_t inputTensorDesc,
                const cudnnFilterDescriptor_t filterDesc, int nbDims,
                int tensorOuputDimA[]),
               (convDesc, inputTensorDesc, filterDesc, nbDims, tensorOuputDimA))

TUNEDB_FORWARD(cudnnGetFilterNdDescriptor,
               (const cudnnFilterDescriptor_t filterDesc, int nbDimsRequested,
                cudnnDataType_t *dataType,
                /* image data type */ cudnnTensorFormat_t *format, int *nbDims,
                int filterDimA[]),
               (filterDesc, nbDimsRequested, dataType, format, nbDims,
                filterDimA))

TUNEDB_FORWARD(cudnnGetTensorNdDescriptor,
               (const cudnnTensorDescriptor_t tensorDesc, int nbDimsRequested,
                cudnnDataType_t *dataType, int *nbDims, int dimA[],
                int strideA[]),
               (tensorDesc, nbDimsRequested, dataType, nbDims, dimA, strideA))

TUNEDB_FORWARD(cudnnSetConvolutionGroupCount,
               (cudnnConvolutionDescriptor_t convDesc, int groupCount),
               (convDesc, groupCount))

TUNEDB_FORWARD(cudnnSetConvolutionMathType,
               (cudnnConvolutionDescriptor_t convDesc,
                cudnnMathType_t mathType),
               (convDesc, mathType))

TUNEDB_FORWARD(cudnnSetConvolutionNdDescriptor,
               (cudnnConvolutionDescriptor_t convDesc, int arrayLength,
                /* nbDims-2 size */ const int padA[], const int filterStrideA[],
                const int dilationA[], cudnnConvolutionMode_t mode,
                cudnnDataType_t computeType),
               (convDesc, arrayLength, padA, filterStrideA, dilationA, mode,
                computeType))

TUNEDB_FORWARD(cudnnSetFilterNdDescriptor,
               (cudnnFilterDescriptor_t filterDesc, cudnnDataType_t dataType,
                /* image data type */ cudnnTensorFormat_t format, int nbDims,
                const int filterDimA[]),
               (filterDesc, dataType, format, nbDims, filterDimA))

TUNEDB_FORWARD(cudnnSetTensorNdDescriptor,
               (cudnnTensorDescriptor_t tensorDesc, cudnnDataType_t dataType,
                int nbDims, const int dimA[], const int strideA[]),
               (tensorDesc, dataType, nbDims, dimA, strideA))

// The nine calls the shim interposes: the core's own code (the client's
// helpers) reaches the real ones directly.
TUNEDB_FORWARD(cudnnFindConvolutionForwardAlgorithm,
               (cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                const cudnnFilterDescriptor_t wDesc,
                const cudnnConvolutionDescriptor_t convDesc,
                const cudnnTensorDescriptor_t yDesc,
                const int requestedAlgoCount, int *returnedAlgoCount,
                cudnnConvolutionFwdAlgoPerf_t *perfResults),
               (handle, xDesc, wDesc, convDesc, yDesc, requestedAlgoCount,
                returnedAlgoCount, perfResults))

TUNEDB_FORWARD(cudnnFindConvolutionForwardAlgorithmEx,
               (cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                const void *x, const cudnnFilterDescriptor_t wDesc,
                const void *w, const cudnnConvolutionDescriptor_t convDesc,
                const cudnnTensorDescriptor_t yDesc, void *y,
                const int requestedAlgoCount, int *returnedAlgoCount,
                cudnnConvolutionFwdAlgoPerf_t *perfResults, void *workSpace,
                size_t workSpaceSizeInBytes),
               (handle, xDesc, x, wDesc, w, convDesc, yDesc, y,
                requestedAlgoCount, returnedAlgoCount, perfResults, workSpace,
                workSpaceSizeInBytes))

TUNEDB_FORWARD(cudnnGetConvolutionForwardAlgorithm_v7,
               (cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
                const cudnnFilterDescriptor_t filterDesc,
                const cudnnConvolutionDescriptor_t convDesc,
                const cudnnTensorDescriptor_t destDesc,
                const int requestedAlgoCount, int *returnedAlgoCount,
                cudnnConvolutionFwdAlgoPerf_t *perfResults),
               (handle, srcDesc, filterDesc, convDesc, destDesc,
                requestedAlgoCount, returnedAlgoCount, perfResults))

TUNEDB_FORWARD(cudnnFindConvolutionBackwardDataAlgorithm,
               (cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
                const cudnnTensorDescriptor_t dyDesc,
                const cudnnConvolutionDescriptor_t convDesc,
                const cudnnTensorDescriptor_t dxDesc,
                const int requestedAlgoCount, int *returnedAlgoCount,
                cudnnConvolutionBwdDataAlgoPerf_t *perfResults),
               (handle, wDesc, dyDesc, convDesc, dxDesc, requestedAlgoCount,
                returnedAlgoCount, perfResults))

TUNEDB_FORWARD(cudnnFindConvolutionBackwardDataAlgorithmEx,
               (cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
                const void *w, const cudnnTensorDescriptor_t dyDesc,
                const void *dy, const cudnnConvolutionDescriptor_t convDesc,
                const cudnnTensorDescriptor_t dxDesc, void *dx,
                const int requestedAlgoCount, int *returnedAlgoCount,
                cudnnConvolutionBwdDataAlgoPerf_t *perfResults, void *workSpace,
                size_t workSpaceSizeInBytes),
               (handle, wDesc, w, dyDesc, dy, convDesc, dxDesc, dx,
                requestedAlgoCount, returnedAlgoCount, perfResults, workSpace,
                workSpaceSizeInBytes))

TUNEDB_FORWARD(cudnnGetConvolutionBackwardDataAlgorithm_v7,
               (cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc,
                const cudnnTensorDescriptor_t diffDesc,
                const cudnnConvolutionDescriptor_t convDesc,
                const cudnnTensorDescriptor_t gradDesc,
                const int requestedAlgoCount, int *returnedAlgoCount,
                cudnnConvolutionBwdDataAlgoPerf_t *perfResults),
               (handle, filterDesc, diffDesc, convDesc, gradDesc,
                requestedAlgoCount, returnedAlgoCount, perfResults))

TUNEDB_FORWARD(cudnnFindConvolutionBackwardFilterAlgorithm,
               (cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                const cudnnTensorDescriptor_t dyDesc,
                const cudnnConvolutionDescriptor_t convDesc,
                const cudnnFilterDescriptor_t dwDesc,
                const int requestedAlgoCount, int *returnedAlgoCount,
                cudnnConvolutionBwdFilterAlgoPerf_t *perfResults),
               (handle, xDesc, dyDesc, convDesc, dwDesc, requestedAlgoCount,
                returnedAlgoCount, perfResults))

TUNEDB_FORWARD(cudnnFindConvolutionBackwardFilterAlgorithmEx,
               (cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                const void *x, const cudnnTensorDescriptor_t dyDesc,
                const void *y, const cudnnConvolutionDescriptor_t convDesc,
                const cudnnFilterDescriptor_t dwDesc, void *dw,
                const int requestedAlgoCount, int *returnedAlgoCount,
                cudnnConvolutionBwdFilterAlgoPerf_t *perfResults,
                void *workSpace, size_t workSpaceSizeInBytes),
               (handle, xDesc, x, dyDesc, y, convDesc, dwDesc, dw,
                requestedAlgoCount, returnedAlgoCount, perfResults, workSpace,
                workSpaceSizeInBytes))

TUNEDB_FORWARD(cudnnGetConvolutionBackwardFilterAlgorithm_v7,
               (cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
                const cudnnTensorDescriptor_t diffDesc,
                const cudnnConvolutionDescriptor_t convDesc,
                const cudnnFilterDescriptor_t gradDesc,
                const int requestedAlgoCount, int *returnedAlgoCount,
                cudnnConvolutionBwdFilterAlgoPerf_t *perfResults),
               (handle, srcDesc, diffDesc, convDesc, gradDesc,
                requestedAlgoCount, returnedAlgoCount, perfResults))

// The backend (graph) API, for the graph half (interposer_graph.cc) and the
// cudnn/ layer's backend_graph.cc under it.

TUNEDB_FORWARD(cudnnBackendCreateDescriptor,
               (cudnnBackendDescriptorType_t descriptorType,
                cudnnBackendDescriptor_t *descriptor),
               (descriptorType, descriptor))

TUNEDB_FORWARD(cudnnBackendDestroyDescriptor,
               (cudnnBackendDescriptor_t descriptor), (descriptor))

TUNEDB_FORWARD(cudnnBackendFinalize, (cudnnBackendDescriptor_t descriptor),
               (descriptor))

TUNEDB_FORWARD(cudnnBackendSetAttribute,
               (cudnnBackendDescriptor_t descriptor,
                cudnnBackendAttributeName_t attributeName,
                cudnnBackendAttributeType_t attributeType, int64_t elementCount,
                const void *arrayOfElements),
               (descriptor, attributeName, attributeType, elementCount,
                arrayOfElements))

TUNEDB_FORWARD(cudnnBackendGetAttribute,
               (cudnnBackendDescriptor_t const descriptor,
                cudnnBackendAttributeName_t attributeName,
                cudnnBackendAttributeType_t attributeType,
                int64_t requestedElementCount, int64_t *elementCount,
                void *arrayOfElements),
               (descriptor, attributeName, attributeType, requestedElementCount,
                elementCount, arrayOfElements))

TUNEDB_FORWARD(cudnnBackendExecute,
               (cudnnHandle_t handle, cudnnBackendDescriptor_t executionPlan,
                cudnnBackendDescriptor_t variantPack),
               (handle, executionPlan, variantPack))

extern "C" void cudnnGetLastErrorString(char *message, size_t max_size) {
  static tunedb::preload::RealFunction<decltype(&::cudnnGetLastErrorString)>
      real("cudnnGetLastErrorString");
  auto f = real.get();
  if (f != nullptr) {
    f(message, max_size);
  } else if (message != nullptr && max_size > 0) {
    message[0] = '\0';
  }
}
