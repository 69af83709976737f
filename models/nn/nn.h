// One include for the models layer: nn modules, parameter files, optimizers.
//
//   using namespace tinyddp;
//   manual_seed(0);
//   auto model = std::make_shared<nn::Sequential>(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 3));
//   optim::SGD opt(model->parameters(), {.lr = 0.1, .momentum = 0.9});
//   nn::CrossEntropyLoss ce;
//   opt.zero_grad();
//   ce((*model)(x), labels).backward();
//   opt.step();
//   nn::save_parameters(*model, "model.params");
#pragma once

#include "models/nn/activation.h"
#include "models/nn/linear.h"
#include "models/nn/loss.h"
#include "models/nn/module.h"
#include "models/nn/sequential.h"
#include "models/nn/serialize.h"
#include "models/optim/optimizer.h"
#include "models/optim/sgd.h"
