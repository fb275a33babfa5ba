// The architecture generators behind the model registry (models.h): each
// writes one network layer by layer on a NetBuilder (models_resnet.cc,
// models_vgg_mobile.cc, models_unet.cc).
//
// Thread safety: pure functions of their arguments.
#ifndef TUNEDB_TUNER_MODEL_GENERATORS_H_
#define TUNEDB_TUNER_MODEL_GENERATORS_H_

#include "tuner/net_builder.h"

namespace tunedb::tuner {

// ResNet v1.5 as in torchvision (stride on the 3x3 conv of a bottleneck).
Tensor BuildResNet18(NetBuilder& b, const Tensor& x);
Tensor BuildResNet34(NetBuilder& b, const Tensor& x);
Tensor BuildResNet50(NetBuilder& b, const Tensor& x);
Tensor BuildResNet101(NetBuilder& b, const Tensor& x);
Tensor BuildResNet152(NetBuilder& b, const Tensor& x);
// VGG-16 (configuration D).
Tensor BuildVgg16(NetBuilder& b, const Tensor& x);
// MobileNetV2 (width 1.0) and EfficientNet-B0, as in torchvision.
Tensor BuildMobileNetV2(NetBuilder& b, const Tensor& x);
Tensor BuildEfficientNetB0(NetBuilder& b, const Tensor& x);
// U-Net (Ronneberger et al. 2015): unpadded ("valid") convolutions as in the
// paper, and the common padded variant.
Tensor BuildUNet(NetBuilder& b, const Tensor& x);
Tensor BuildUNetSame(NetBuilder& b, const Tensor& x);
// 3-D U-Net (Cicek et al. 2016) and R3D-18 (Tran et al. 2018, torchvision).
Tensor BuildUNet3d(NetBuilder& b, const Tensor& x);
Tensor BuildR3d18(NetBuilder& b, const Tensor& x);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_MODEL_GENERATORS_H_
