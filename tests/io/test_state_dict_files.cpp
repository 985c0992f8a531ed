// state_dict() and the safetensors functions share one type (StateDict): a model saves and reloads
// itself through a file with no conversion, and the file's names are the model's.
#include "io_test_util.h"
#include "tessera/tessera.h"

using namespace tessera;
using namespace tessera::test;

TEST(StateDictFiles, SaveAndLoadAModelThroughSafetensors) {
  ScratchDir dir;
  ops::Generator g1(1), g2(2);
  nn::Sequential a({std::make_shared<nn::Linear>(3, 4, true, g1), std::make_shared<nn::BatchNorm1d>(4)});
  nn::Sequential b({std::make_shared<nn::Linear>(3, 4, true, g2), std::make_shared<nn::BatchNorm1d>(4)});
  const std::string path = dir.file("model.safetensors");

  io::save_safetensors(path, a.state_dict());
  EXPECT_TRUE(b.load_state_dict(io::load_safetensors(path)).empty());

  const StateDict want = a.state_dict(), got = b.state_dict();
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, array] : want) {
    ASSERT_TRUE(got.count(name)) << name;
    EXPECT_EQ(got.at(name).to_f64(), array.to_f64()) << name;
  }
}

TEST(StateDictFiles, MetadataTravelsBesideTheSameTensors) {
  ScratchDir dir;
  const StateDict tensors{{"w", Array::from_vector<float>({1, 2}, {2})}};
  io::save_safetensors(dir.file("m.safetensors"), tensors, {{"format", "pt"}});
  const io::SafetensorsFile file = io::load_safetensors_with_metadata(dir.file("m.safetensors"));
  EXPECT_EQ(file.metadata.at("format"), "pt");
  EXPECT_EQ(file.tensors.at("w").to_f64(), io::load_safetensors(dir.file("m.safetensors")).at("w").to_f64());
}
