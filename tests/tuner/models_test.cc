// The built-in model shape sets against facts about the architectures:
// convolution counts, output sizes, and parameter counts as published by
// torchvision (which checks every shape at once: a wrong channel count or
// kernel anywhere changes the total).
#include "tuner/models.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace tunedb::tuner {
namespace {

BuiltModel Build(const std::string& name, std::vector<int64_t> input = {}) {
  auto model = FindModel(name);
  EXPECT_TRUE(model.ok()) << model.status();
  auto built = BuildModel(**model, input);
  EXPECT_TRUE(built.ok()) << built.status();
  return *built;
}

int CountDepthwise(const BuiltModel& m) {
  int n = 0;
  for (const ConvLayer& l : m.layers) n += l.depthwise() ? 1 : 0;
  return n;
}

int CountTransposed(const BuiltModel& m) {
  int n = 0;
  for (const ConvLayer& l : m.layers) n += l.transposed ? 1 : 0;
  return n;
}

int64_t ConvWeights(const ConvLayer& l) {
  int64_t w = l.in_channels / l.groups * l.out_channels;
  for (int i = 0; i < 3; ++i) w *= l.kernel[i] == 0 ? 1 : l.kernel[i];
  return w;
}

// Conv weights, plus a BatchNorm (scale and shift) after every convolution,
// plus a final fully connected layer.
int64_t ParamsWithBatchNorm(const BuiltModel& m, int64_t fc_in,
                            int64_t fc_out) {
  int64_t total = fc_in * fc_out + fc_out;
  for (const ConvLayer& l : m.layers)
    total += ConvWeights(l) + 2 * l.out_channels;
  return total;
}

void ExpectOutput(const BuiltModel& m, int64_t channels, Dims spatial) {
  EXPECT_EQ(m.output.channels, channels) << m.info->name;
  EXPECT_EQ(m.output.spatial, spatial) << m.info->name;
}

TEST(ModelsTest, ResNetConvCountsAndOutputs) {
  struct Case {
    std::string name;
    size_t convs;
    int64_t out_channels;
    int64_t params;  // torchvision's published totals
  };
  for (const Case& c : {Case{"resnet18", 20, 512, 11689512},
                        Case{"resnet34", 36, 512, 21797672},
                        Case{"resnet50", 53, 2048, 25557032},
                        Case{"resnet101", 104, 2048, 44549160},
                        Case{"resnet152", 155, 2048, 60192808}}) {
    BuiltModel m = Build(c.name);
    EXPECT_EQ(m.layers.size(), c.convs) << c.name;
    ExpectOutput(m, c.out_channels, {7, 7, 0});
    EXPECT_EQ(ParamsWithBatchNorm(m, c.out_channels, 1000), c.params) << c.name;
    EXPECT_EQ(CountDepthwise(m), 0);
  }
}

TEST(ModelsTest, ResNet50Details) {
  BuiltModel m = Build("ResNet-50");
  const ConvLayer& stem = m.layers.front();
  EXPECT_EQ(stem.name, "conv1");
  EXPECT_EQ(stem.in_channels, 3);
  EXPECT_EQ(stem.output, (Dims{112, 112, 0}));
  EXPECT_TRUE(stem.reads_network_input);
  int projections = 0;
  for (const ConvLayer& l : m.layers) {
    if (l.name.find("downsample") != std::string::npos) ++projections;
    if (&l != &stem) {
      EXPECT_FALSE(l.reads_network_input) << l.name;
    }
  }
  EXPECT_EQ(projections, 4);
  // v1.5: the stride sits on the 3x3 conv of the first block of a stage.
  for (const ConvLayer& l : m.layers) {
    if (l.name == "layer2.0.conv2") {
      EXPECT_EQ(l.stride[0], 2);
      EXPECT_EQ(l.input, (Dims{56, 56, 0}));
    }
    if (l.name == "layer2.0.conv1") {
      EXPECT_EQ(l.stride[0], 1);
    }
  }
}

TEST(ModelsTest, ResNetOtherInputSize) {
  BuiltModel m = Build("resnet50", {256, 320});
  ExpectOutput(m, 2048, {8, 10, 0});
}

TEST(ModelsTest, Vgg16) {
  BuiltModel m = Build("vgg16");
  EXPECT_EQ(m.layers.size(), 13u);
  ExpectOutput(m, 512, {7, 7, 0});
  // Conv weights and biases, then three fully connected layers.
  int64_t params =
      25088 * 4096 + 4096 + 4096 * 4096 + 4096 + 4096 * 1000 + 1000;
  for (const ConvLayer& l : m.layers) params += ConvWeights(l) + l.out_channels;
  EXPECT_EQ(params, 138357544);
}

TEST(ModelsTest, MobileNetV2) {
  BuiltModel m = Build("mobilenetv2");
  EXPECT_EQ(m.layers.size(), 52u);
  EXPECT_EQ(CountDepthwise(m), 17);
  ExpectOutput(m, 1280, {7, 7, 0});
  EXPECT_EQ(ParamsWithBatchNorm(m, 1280, 1000), 3504872);
}

TEST(ModelsTest, EfficientNetB0) {
  BuiltModel m = Build("efficientnet-b0");
  // Stem, 16 MBConv blocks (the first without expansion), head; each block
  // has two squeeze-excitation 1x1 convs on a 1x1 map.
  EXPECT_EQ(m.layers.size(), 81u);
  EXPECT_EQ(CountDepthwise(m), 16);
  ExpectOutput(m, 1280, {7, 7, 0});
  int64_t params = 1280 * 1000 + 1000;
  int se = 0;
  for (const ConvLayer& l : m.layers) {
    if (l.name.find(".se.") != std::string::npos) {
      ++se;
      EXPECT_EQ(l.input, (Dims{1, 1, 0})) << l.name;
      params += ConvWeights(l) + l.out_channels;  // bias, no BatchNorm
    } else {
      params += ConvWeights(l) + 2 * l.out_channels;
    }
  }
  EXPECT_EQ(se, 32);
  EXPECT_EQ(params, 5288548);
}

TEST(ModelsTest, UNetAsInThePaper) {
  BuiltModel m = Build("unet");
  // "In total the network has 23 convolutional layers."
  EXPECT_EQ(m.layers.size(), 23u);
  EXPECT_EQ(CountTransposed(m), 4);
  // 572x572 input tile -> 388x388 output segmentation map, 2 classes.
  ExpectOutput(m, 2, {388, 388, 0});
  for (const ConvLayer& l : m.layers) {
    if (l.name == "down5.conv2") {
      EXPECT_EQ(l.output, (Dims{28, 28, 0}));
    }
    if (l.name == "up4.conv1") {
      EXPECT_EQ(l.in_channels, 1024);
    }
  }
}

TEST(ModelsTest, UNetRejectsAnInputThatDoesNotFit) {
  auto model = FindModel("unet");
  ASSERT_TRUE(model.ok());
  auto built = BuildModel(**model, {512, 512});
  EXPECT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("512x512"), std::string::npos)
      << built.status();
}

TEST(ModelsTest, UNetSame) {
  BuiltModel m = Build("unet-same", {512, 512});
  EXPECT_EQ(m.layers.size(), 23u);
  ExpectOutput(m, 2, {512, 512, 0});
}

TEST(ModelsTest, UNet3dAsInThePaper) {
  BuiltModel m = Build("unet3d");
  // 132x132x116 voxels in (D=116), 44x44x28 out, 3 labels.
  EXPECT_EQ(m.layers.size(), 18u);
  EXPECT_EQ(CountTransposed(m), 3);
  ExpectOutput(m, 3, {28, 44, 44});
  for (const ConvLayer& l : m.layers) {
    EXPECT_EQ(l.kernel[2], l.kernel[0]) << "3-D kernels: " << l.name;
    if (l.name == "up3.conv1") {
      EXPECT_EQ(l.in_channels, 768);
    }
  }
}

TEST(ModelsTest, R3d18) {
  BuiltModel m = Build("r3d18");
  EXPECT_EQ(m.layers.size(), 20u);
  ExpectOutput(m, 512, {2, 7, 7});
  EXPECT_EQ(m.layers.front().kernel, (Dims{3, 7, 7}));
  EXPECT_EQ(ParamsWithBatchNorm(m, 512, 400), 33371472);
}

TEST(ModelsTest, UnknownModelListsNames) {
  auto model = FindModel("alexnet");
  EXPECT_EQ(model.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(model.status().message().find("resnet50"), std::string::npos);
}

TEST(ModelsTest, InputSizeParsing) {
  EXPECT_EQ(*ParseInputSize("224", 2), (std::vector<int64_t>{224, 224}));
  EXPECT_EQ(*ParseInputSize("16x112x112", 3),
            (std::vector<int64_t>{16, 112, 112}));
  EXPECT_FALSE(ParseInputSize("224x224", 3).ok());
  EXPECT_FALSE(ParseInputSize("0", 2).ok());
  EXPECT_FALSE(ParseInputSize("big", 2).ok());
}

TEST(ModelsTest, TooSmallInputIsAnError) {
  auto model = FindModel("vgg16");
  ASSERT_TRUE(model.ok());
  EXPECT_FALSE(BuildModel(**model, {16, 16}).ok());
}

}  // namespace
}  // namespace tunedb::tuner
